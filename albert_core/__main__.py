"""`python -m albert_core ...`: see albert_core.cli."""

from albert_core.cli import main

raise SystemExit(main())
