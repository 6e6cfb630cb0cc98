"""template.yaml is publishable to the Serverless Application Repository, and the console groups every parameter.

The rules are AWS's (docs/aws-assumptions.md, rows 35 and 36): the SAR metadata's required fields
and patterns, local licence and readme files, no intrinsic functions; one console group per parameter.
"""

from __future__ import annotations

import re
import tomllib

from reaper_devkit.template import ROOT, load

T = load()
APP = T["Metadata"]["AWS::ServerlessRepo::Application"]


def test_the_required_fields_follow_the_serverless_repo_patterns():
    assert re.fullmatch(r"[a-zA-Z0-9\-]+", APP["Name"]) and len(APP["Name"]) <= 140
    assert 1 <= len(APP["Description"]) <= 256
    assert re.fullmatch(r"^[a-z0-9](([a-z0-9]|-(?!-))*[a-z0-9])?$", APP["Author"]) and len(APP["Author"]) <= 127
    assert all(isinstance(v, str | list) for v in APP.values()), "no intrinsic functions in this key"


def test_licence_readme_and_version_are_the_projects_own():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert APP["SpdxLicenseId"] == project["license"] == "Apache-2.0"
    assert (ROOT / APP["LicenseUrl"]).is_file() and (ROOT / APP["ReadmeUrl"]).is_file()
    assert APP["SemanticVersion"] == project["version"]
    assert APP["SourceCodeUrl"].startswith("https://")


def test_every_parameter_is_in_exactly_one_console_group():
    groups = [p for g in T["Metadata"]["AWS::CloudFormation::Interface"]["ParameterGroups"] for p in g["Parameters"]]
    assert sorted(groups) == sorted(T["Parameters"]), sorted(set(T["Parameters"]) ^ set(groups))
