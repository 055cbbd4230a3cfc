"""`python -m albert_core ...`: see albert_core.cli.main."""

from albert_core.cli.main import main

raise SystemExit(main())
