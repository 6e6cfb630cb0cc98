"""The notebook decision from a Jupyter reading (JupyterReads=on), and the reading's own guards."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from reaper.core.model import Verdict
from reaper.kinds.notebook import notebook_jupyter
from reaper.kinds.notebook.model import JupyterKernel, JupyterReading
from reaper.kinds.notebook.rules import from_jupyter

NOW = datetime(2026, 12, 2, 12, 0, tzinfo=UTC)
STARTED = NOW - timedelta(days=1)


def kernel(state: str = "idle", ago: int = 120, connections: int = 0) -> JupyterKernel:
    return JupyterKernel(state, NOW - timedelta(minutes=ago), connections)


@pytest.mark.parametrize("state", ["busy", "starting", "restarting", "autorestarting"])
def test_any_kernel_not_idle_keeps_it(state):
    d = from_jupyter(JupyterReading(STARTED, (kernel(), kernel(state))), 30, NOW)
    assert d.verdict is Verdict.KEEP and state in d.reason and d.unknown is None


def test_an_open_connection_keeps_it_even_when_every_kernel_is_long_idle():
    d = from_jupyter(JupyterReading(STARTED, (kernel(connections=1),)), 30, NOW)
    assert d.verdict is Verdict.KEEP and "1 open connection" in d.reason


def test_terminal_activity_inside_the_window_keeps_it_and_after_it_the_notebook_is_idle():
    recent = JupyterReading(STARTED, (kernel(),), (NOW - timedelta(minutes=10),))
    assert from_jupyter(recent, 30, NOW).verdict is Verdict.KEEP
    old = JupyterReading(STARTED, (kernel("dead"),), (NOW - timedelta(minutes=45),))
    d = from_jupyter(old, 30, NOW)
    assert d.verdict is Verdict.ACT and d.action == "stop" and "45 m" in d.reason


def test_a_server_started_inside_the_window_with_nothing_running_is_kept():
    d = from_jupyter(JupyterReading(NOW - timedelta(minutes=3)), 30, NOW)
    assert d.verdict is Verdict.KEEP


@pytest.mark.parametrize("code", ["url-refused", "jupyter-unreachable", "jupyter-unreadable", "jupyter-not-reached"])
def test_a_reading_that_failed_is_unknown_with_its_code(code):
    d = from_jupyter(JupyterReading(unreadable="why", unknown=code), 30, NOW)
    assert d.verdict is Verdict.KEEP and d.unknown == code and "why" in d.reason


@pytest.mark.parametrize(
    "status, kernels, terminals",
    [
        ({"started": "2026-12-01T00:00:00Z", "connections": "1"}, [], []),
        ({"started": "yesterday", "connections": 0}, [], []),
        ({"started": "2026-12-01T00:00:00", "connections": 0}, [], []),  # no zone: not the documented UTC
        ({"started": "2026-12-01T00:00:00Z", "connections": 0}, [{"execution_state": "idle", "connections": 0}], []),
        ({"started": "2026-12-01T00:00:00Z", "connections": 0}, [], [{"name": "1"}]),
        ([], [], []),
    ],
)
def test_an_answer_unlike_the_documented_models_is_unreadable(status, kernels, terminals):
    with pytest.raises(notebook_jupyter.Failed) as err:
        notebook_jupyter.parse(status, kernels, terminals)
    assert err.value.code == notebook_jupyter.UNREADABLE


class Sagemaker:
    def __init__(self, error: Exception | None = None, url: str = "https://nb.notebook.us-east-1.sagemaker.aws?authToken=SECRET") -> None:
        self.error, self.url = error, url
        self.asked: list[Any] = []

    def create_presigned_notebook_instance_url(self, **kwargs: Any) -> dict[str, str]:
        self.asked.append(kwargs)
        if self.error:
            raise self.error
        return {"AuthorizedUrl": self.url}


def test_any_failure_is_a_reading_whose_text_never_holds_the_url():
    # Given a URL whose scheme the opener refuses, and one whose host cannot be resolved offline
    for url in ("file:///etc/passwd?authToken=SECRET", "https://nb.invalid?authToken=SECRET"):
        reading = notebook_jupyter.read_one(Sagemaker(url=url), "nb", timeout=2)
        assert reading.unknown in (notebook_jupyter.UNREADABLE, notebook_jupyter.UNREACHABLE)
        assert "SECRET" not in (reading.unreadable or "") and "nb.invalid" not in (reading.unreadable or "")


def test_an_unexpected_error_is_unknown_not_raised():
    reading = notebook_jupyter.read_one(Sagemaker(error=RuntimeError("https://x?authToken=SECRET")), "nb")
    assert reading.unknown == notebook_jupyter.UNREACHABLE and "SECRET" not in (reading.unreadable or "")


def test_the_session_asked_for_is_the_shortest_the_api_allows():
    sm = Sagemaker(error=RuntimeError("stop"))
    notebook_jupyter.read_one(sm, "nb")
    assert sm.asked == [{"NotebookInstanceName": "nb", "SessionExpirationDurationInSeconds": 1800}]


def test_notebooks_not_read_within_the_budget_are_unknown_not_reached():
    readings = notebook_jupyter.read_all(Sagemaker(error=RuntimeError("stop")), ["a", "b"], budget=0)
    assert set(readings) == {"a", "b"}
    assert all(r.unknown in (notebook_jupyter.NOT_REACHED, notebook_jupyter.UNREACHABLE) for r in readings.values())
    assert notebook_jupyter.read_all(Sagemaker(), []) == {}
