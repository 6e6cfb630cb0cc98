from reaper.cli.main import main

raise SystemExit(main())
