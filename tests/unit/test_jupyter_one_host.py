"""A notebook's user must not choose whose answers the reaper reads (issue 33, item 1).

The Jupyter server behind the presigned hop is the user's: it can answer any request with a redirect. The
reader follows redirects only within the presigned URL's origin (scheme, host, port); a redirect elsewhere
makes the resource unknown (`jupyter-off-host`) and no request reaches the other host. Real HTTP servers on
127.0.0.1 (reaper_devkit.jupyter_hostile): the hop's origin (`home`) and another one (`evil`, an idle
Jupyter whose answers would make a busy notebook look idle). docs/safety.md lists the attacks and figures.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from reaper.aws import jupyter as reader
from reaper.aws.jupyter_http import origin, same_origin
from reaper.core.jupyter_verdict import JupyterReading
from reaper_devkit.jupyter_hostile import FakeJupyter, tls_files

NOTEBOOK = reader.Door("CreatePresignedNotebookInstanceUrl", "the notebook's presigned URL", "no fix")
STUDIO = reader.Door("CreatePresignedDomainUrl", "the app's presigned URL", "no fix", landing="api/status")


@pytest.fixture
def home() -> Iterator[FakeJupyter]:
    server = FakeJupyter()
    yield server
    server.close()


@pytest.fixture
def evil() -> Iterator[FakeJupyter]:
    server = FakeJupyter()
    yield server
    server.close()


# Where the user's server sends the reader, by the Location it answers (H: the hop's port, E: another's)
ATTACKS = {
    "other port": "http://127.0.0.1:{E}/api/status",
    "other host name, same port": "http://localhost:{H}/api/status",
    "other host and port": "http://localhost:{E}/api/status",
    "the same IP as a decimal number": "http://2130706433:{H}/api/status",
    "the same host with a trailing dot": "http://127.0.0.1.:{H}/api/status",
    "scheme-relative": "//127.0.0.1:{E}/api/status",
    "https on the hop's port": "https://127.0.0.1:{H}/api/status",
    "userinfo naming the hop": "http://127.0.0.1:{H}@127.0.0.1:{E}/api/status",
    "userinfo on another host": "http://good@127.0.0.1:{E}/api/status",
    "userinfo on the hop itself": "http://evil@127.0.0.1:{H}/api/status",
    "backslash before userinfo": "http://127.0.0.1:{E}\\@127.0.0.1:{H}/api/status",
    "ideographic full stops (IDNA maps them to dots)": "http://127\u30020\u30020\u30021:{E}/api/status",
    "fullwidth letters": "http://\uff4c\uff4f\uff43\uff41\uff4c\uff48\uff4f\uff53\uff54:{E}/api/status",
    "percent-encoded host": "http://127.0.0.%31:{E}/api/status",
    "upper-case other host": "http://LOCALHOST:{E}/api/status",
    "ftp": "ftp://127.0.0.1:{E}/api/status",
}


def presign(url: str):
    return lambda: url


def read(door: reader.Door, url: str) -> JupyterReading:
    return reader.read_all(door, {"nb": presign(url)}, timeout=5, budget=60)["nb"]


def assert_off_host(reading: JupyterReading, home: FakeJupyter, evil: FakeJupyter) -> None:
    assert reading.unknown == reader.OFF_ORIGIN, reading
    assert reading.started is None  # nothing was judged
    assert evil.requests == [] and home.foreign() == []  # no request reached another host, nor the hop by another name
    assert str(evil.port) not in (reading.unreadable or "") and "localhost" not in (reading.unreadable or "")


@pytest.mark.parametrize("attack", sorted(ATTACKS))
@pytest.mark.parametrize("door", [NOTEBOOK, STUDIO], ids=["notebook", "studio"])
def test_the_hop_redirected_to_another_host_is_not_followed(home, evil, door, attack):
    # Given a hop whose answer is a redirect the notebook's user chose
    location = ATTACKS[attack].format(H=home.port, E=evil.port)
    home.redirects["/"] = location
    # When the reader follows the presigned URL
    reading = read(door, f"{home.origin}/?authToken=T")
    # Then no request left the hop's origin and the resource is unknown, never judged from elsewhere
    assert_off_host(reading, home, evil)


@pytest.mark.parametrize("path", ["/api/status", "/api/kernels", "/api/terminals"])
def test_a_redirect_on_any_later_read_is_not_followed(home, evil, path):
    # Given a hop that lands on its own Jupyter, whose API answers one read with a redirect to another server
    home.redirects[path] = f"http://127.0.0.1:{evil.port}{path}"
    reading = read(NOTEBOOK, f"{home.origin}/?authToken=T")
    assert_off_host(reading, home, evil)


def test_a_chain_that_leaves_after_a_same_host_step_is_not_followed(home, evil):
    home.redirects["/"] = "/step?x=1"
    home.redirects["/step"] = f"http://127.0.0.1:{evil.port}/api/status"
    reading = read(NOTEBOOK, f"{home.origin}/?authToken=T")
    assert_off_host(reading, home, evil)
    assert [path for _, path in home.requests] == ["/", "/step"]


@pytest.mark.parametrize(
    "location",
    ["/api/status?token=J", "api/status", "{O}/api/status?token=J", "HTTP://127.0.0.1:{H}/api/status", "/tree"],
    ids=["relative", "relative-path", "absolute", "scheme-case", "another-page"],
)
def test_redirects_that_stay_on_the_hops_host_are_followed(home, evil, location):
    # Given a hop that redirects within its own origin (as AWS's does, and the kit's stand-in)
    home.redirects["/"] = location.format(O=home.origin, H=home.port)
    # When read
    reading = read(NOTEBOOK, f"{home.origin}/?authToken=T")
    # Then the server is read and judged from its own answers
    assert reading.unknown is None and reading.started is not None
    assert {path for _, path in home.requests} >= {"/api/status", "/api/kernels", "/api/terminals"}
    assert evil.requests == [] and home.foreign() == []


def test_studio_lands_on_its_own_origin_under_the_apps_path(home, evil):
    home.redirects["/"] = "/jupyterlab/default/api/status"
    home.redirects["/jupyterlab/default/api/status"] = f"http://127.0.0.1:{evil.port}/jupyterlab/default/api/status"
    assert_off_host(read(STUDIO, f"{home.origin}/?authToken=T"), home, evil)


@pytest.fixture
def trusted_tls(monkeypatch: pytest.MonkeyPatch, tmp_path) -> tuple[str, str]:
    files = tls_files(str(tmp_path))
    monkeypatch.setenv("SSL_CERT_FILE", files[0])  # ssl.create_default_context() trusts it
    return files


def test_an_https_hop_is_read_and_its_downgrade_to_http_is_not_followed(trusted_tls, evil):
    # Given a hop served over TLS (a certificate the reader trusts), read within its origin
    secure = FakeJupyter(tls=trusted_tls)
    try:
        secure.redirects["/"] = "/api/status"
        assert read(NOTEBOOK, f"{secure.origin}/?authToken=T").started is not None
        # When it redirects to plain http (on another port: one port cannot serve both)
        secure.redirects["/"] = f"http://127.0.0.1:{evil.port}/api/status"
        reading = read(NOTEBOOK, f"{secure.origin}/?authToken=T")
        # Then the downgrade is not followed
        assert reading.unknown == reader.OFF_ORIGIN and evil.requests == []
    finally:
        secure.close()


@pytest.mark.parametrize(
    "start, target, stays",
    [
        ("https://nb.notebook.us-east-1.sagemaker.aws/?authToken=T", "https://NB.Notebook.us-east-1.sagemaker.aws/tree", True),
        ("https://nb.notebook.us-east-1.sagemaker.aws/?authToken=T", "https://nb.notebook.us-east-1.sagemaker.aws:443/tree", True),
        ("https://nb.notebook.us-east-1.sagemaker.aws/?authToken=T", "http://nb.notebook.us-east-1.sagemaker.aws/tree", False),
        ("https://nb.notebook.us-east-1.sagemaker.aws/?authToken=T", "https://nb.notebook.us-east-1.sagemaker.aws:8443/", False),
        ("https://nb.notebook.us-east-1.sagemaker.aws/?authToken=T", "https://nb.notebook.us-east-1.sagemaker.aws./", False),
        ("https://nb.notebook.us-east-1.sagemaker.aws/?authToken=T", "https://xn--nb-notebook-9hb.us-east-1.sagemaker.aws/", False),
        ("https://nb.notebook.us-east-1.sagemaker.aws/?authToken=T", "https://nb.notebooк.us-east-1.sagemaker.aws/", False),
        ("https://nb.notebook.us-east-1.sagemaker.aws/?authToken=T", "https://nb.notebook.us-east-1.sagemaker.aws@evil/", False),
        ("https://nb.notebook.us-east-1.sagemaker.aws/?authToken=T", "https://other.notebook.us-east-1.sagemaker.aws/", False),
        ("http://nb.example/", "https://nb.example/", True),  # an upgrade to https at the default ports
        ("http://nb.example:8080/", "https://nb.example:8443/", False),
        ("https://[::1]:8443/", "https://[::1]:8443/api/status", True),
    ],
)
def test_the_origin_rule(start, target, stays):
    there = origin(start)
    assert there is not None
    assert same_origin(there, target) is stays


def test_a_presigned_url_with_userinfo_or_an_odd_host_is_not_opened(home):
    for url in (f"http://x@127.0.0.1:{home.port}/?authToken=T", f"http://127.0.0.%31:{home.port}/"):
        reading = read(NOTEBOOK, url)
        assert reading.unknown == reader.UNREADABLE and home.requests == []
