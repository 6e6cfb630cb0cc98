"""The demo's scenes: each seeds one kind's resources at the demo's start (`seed(session, now)`) and says
what the plan then shows for each.

The plan and the sweeps read the clock when they run, seconds after the seeding, or minutes on a loaded
machine: whatever reports every 5 minutes (the notebook activity agent, EC2's metrics) goes on reporting
for AHEAD periods after the seeding, as it would while the demo runs. Without it, a 5-minute boundary
between the seeding and the plan leaves the newest whole period empty, and a gap is not idleness
(docs/kinds/notebook.md): the idle notebooks were kept where the scene said stopped.
"""

AHEAD = 6  # 5-minute periods, 30 min: the demo takes under a minute alone, a few under a loaded test run
