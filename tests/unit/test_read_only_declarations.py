"""Issue 39: the read-only policy's split is declared by each kind (kinds/<kind>/__init__.py): the reads only a change
or an event makes are among what the kind's sweep function is granted, and the reads the kit cannot bring about are
among the dry-run reads, each with its reason."""

from __future__ import annotations

import pytest

from reaper import kinds as kind_registry
from reaper.core.kind_names import KIND_NAMES
from reaper.sweep.iam import is_read, read_only_permissions, sweep_function_permissions


@pytest.mark.parametrize("name", KIND_NAMES)
def test_change_reads_are_declared_reads_the_function_is_granted_and_out_of_the_dry_run(name):
    # Given the kind's declaration
    kind = kind_registry.get(name)
    d = kind.declaration
    # Then each read only a change makes is a read the kind declares, the sweep function keeps it, a dry run does not
    assert set(d.change_reads) <= set(d.read_permissions), sorted(set(d.change_reads) - set(d.read_permissions))
    assert all(is_read(p) for p in d.change_reads)
    assert set(d.change_reads) <= sweep_function_permissions(name)
    assert not set(d.change_reads) & kind.dry_run_reads()


@pytest.mark.parametrize("name", KIND_NAMES)
def test_untriggered_reads_are_dry_run_reads_each_with_its_reason(name):
    d = kind_registry.get(name).declaration
    assert set(d.untriggered_reads) <= read_only_permissions([name])
    assert all(len(why) > 40 for why in d.untriggered_reads.values())


def test_no_kind_writes_in_its_read_only_policy():
    assert all(is_read(p) for p in read_only_permissions(KIND_NAMES))
