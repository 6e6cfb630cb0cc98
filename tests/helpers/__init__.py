"""What tests share beyond fixtures: helpers a test module imports (never another test module)."""
