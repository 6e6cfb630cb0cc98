"""The plan table: fits the terminal, shows the owner, filters, and an honest savings footer."""

from __future__ import annotations

from reaper.cli.output import footer, format_table, select
from reaper.core.model import Decision, Mode, Outcome, Resource, Verdict

LONG = "no activity for 3 h 05 m; " + "the agent reported 0 in every period of the window; " * 8


def outcome(
    rid: str,
    verdict: Verdict,
    hourly: float | None = 1.0,
    owner: str | None = "ana@example.com",
    kind: str = "notebook",
    **evidence: object,
) -> Outcome:
    r = Resource(
        kind=kind,
        id=rid,
        arn=f"arn:aws:sagemaker:us-east-1:123456789012:{kind}/{rid}",
        region="us-east-1",
        state="InService",
        hourly_usd=hourly,
    )
    return Outcome(r, Decision(verdict, LONG, action="stop", evidence=dict(evidence)), Mode.DRY_RUN, owner=owner)


def reasons_in(table: str) -> list[str]:
    """Each row's reason put back together from its wrapped lines (the lines under a row, trimmed)."""
    found: list[str] = []
    for line in table.splitlines():
        text = line.strip()
        if "no activity for" in line:
            found.append(line[line.index("no activity for") :].strip())
        elif found and line.startswith("    ") and text and not found[-1].endswith(LONG.strip()):
            found[-1] += " " + text
    return found


def test_every_line_fits_the_width_and_the_reason_is_whole():
    rows = [outcome("nb-" + "x" * 70, Verdict.ACT), outcome("busy", Verdict.KEEP, owner="someone-with-a-very-long-address@example.com")]
    for width in (100, 120, 200):
        table = format_table(rows, width=width)
        assert all(len(line) <= width for line in table.splitlines()), width
        assert reasons_in(table) == [LONG.strip()] * 2, width
    assert "OWNER" in table and "ana@example.com" in table and "would stop" in table
    assert "REGION" not in table and "(all in us-east-1)" in table


def test_several_regions_get_a_region_column():
    other = outcome("nb2", Verdict.ACT)
    other.resource.region = "us-west-2"
    assert "REGION" in format_table([outcome("nb", Verdict.ACT), other], width=120)


def test_a_narrow_terminal_still_shows_some_of_the_reason():
    table = format_table([outcome("nb", Verdict.ACT)], width=40)
    assert "no activity" in table.splitlines()[2]  # on its own line, under its row
    assert reasons_in(table) == [LONG.strip()]


def test_at_120_and_80_columns_every_row_fits_and_each_reason_is_whole():
    # Given rows with a very long reason, id and owner, in one region and then in two
    rows = [
        outcome("nb-" + "x" * 70, Verdict.ACT),
        outcome("busy", Verdict.KEEP, owner="someone-with-a-very-long-address@example.com"),
        outcome("job-1", Verdict.WARN, kind="training-job", hourly=39.62, estimated_usd=120.0),
    ]
    for regions in (1, 2):
        if regions == 2:
            rows[1].resource.region = "ap-southeast-2"
        for width in (120, 80):
            # When the table is drawn at that width (a terminal, or COLUMNS into a pipe or a file)
            table = format_table(rows, width=width)
            # Then no line is wider, and every row's reason is there whole, wrapped under its row
            assert all(len(line) <= width for line in table.splitlines()), (regions, width)
            assert reasons_in(table) == [LONG.strip()] * len(rows), (regions, width)


def test_a_reason_longer_than_any_line_is_wrapped_not_cut():
    # Given a reason with a word longer than the table is wide (an ARN from AWS)
    arn = "arn:aws:sagemaker:us-east-1:123456789012:notebook-instance/" + "n" * 90
    row = outcome("nb", Verdict.ACT)
    row.decision = Decision(Verdict.ACT, f"no activity for 3 h; last seen {arn}", action="stop")
    # When drawn at 80 columns
    table = format_table([row], width=80)
    # Then every character of it is in the table, none past the width
    assert all(len(line) <= 80 for line in table.splitlines())
    assert arn in "".join(line.strip() for line in table.splitlines())


def test_filters_by_verdict_and_owner_case_insensitively():
    rows = [
        outcome("a", Verdict.ACT),
        outcome("b", Verdict.KEEP),
        outcome("c", Verdict.ACT, owner="bo@example.com"),
        outcome("d", Verdict.ACT, owner=None),
    ]
    assert [o.resource.id for o in select(rows, ["act"], ["ANA@example.com "])] == ["a"]
    assert [o.resource.id for o in select(rows, ["act", "keep"], [])] == ["a", "b", "c", "d"]
    assert select(rows, [], ["nobody"]) == []


def test_a_jobs_spend_is_spend_so_far_not_a_monthly_saving():
    # Given a notebook at $1/h and a training job at $39.62/h that has spent $120 (the issue's $28,920/month)
    rows = [outcome("nb", Verdict.ACT), outcome("job", Verdict.ACT, hourly=39.62, kind="training-job", estimated_usd=120.0)]
    text = "\n".join(footer(rows))
    assert "$1.00/h ($730/month)" in text
    assert "$120.00 so far" in text
    assert "28,923" not in text and "29,652" not in text  # 39.62 * 730, (39.62 + 1) * 730


def test_unpriced_resources_are_counted_not_priced_at_zero_silently():
    text = "\n".join(footer([outcome("a", Verdict.WARN, hourly=None), outcome("b", Verdict.ACT)]))
    assert "1 without a price" in text
