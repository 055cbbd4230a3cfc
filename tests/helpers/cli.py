"""Running `python -m albert_core` in the test process (`main`), with pytest's `capsys`: a good command line's
output, its --json, and a bad command line's one-line error."""

from __future__ import annotations

import json

import pytest

from albert_core.cli.main import main


def run(capsys, *argv: str) -> str:
    assert main(list(argv)) == 0
    return capsys.readouterr().out


def run_json(capsys, *argv: str):
    return json.loads(run(capsys, *argv, "--json"))


def fails(capsys, *argv: str) -> str:
    """Run a bad command line: exit code 2, exactly one line on stderr, nothing on stdout."""
    with pytest.raises(SystemExit) as exc:
        main(list(argv))
    assert exc.value.code == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.count("\n") == 1 and err.strip(), err
    assert "Traceback" not in err
    return err
