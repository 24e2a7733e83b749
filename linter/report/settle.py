"""What settles an unknown premise, in the user's words: the exact TOML (or the command-line option)
for a configuration key, and the one line a run ends with when advice was withheld."""

from __future__ import annotations

from collections.abc import Iterable

from ..premises import NO_KEY, Withheld, subject

# the value a key takes, as the configuration writes it
VALUE_HINTS = {
    "target.platform": '"ascend-910" | "ascend-910b" | "ascend-npu"',
    "target.framework": '"pytorch" | "mindspore"',
    "target.nodes": "<nodes>",
    "target.mindcluster": "true | false",
    "target.grace-over-time": "<seconds>",
}


# why no configuration settles a premise, where none does
UNSETTLED = {
    "release": "a declared version is outside recovery-lint's tables, and no key settles it",
    "rescheduling": "MindCluster documents no rescheduling for this kind of workload, and no key settles it",
}


def remedy(key: str, premise_name: str = "") -> str:
    """What settles an unknown premise, said to the user: the exact TOML to add and the command-line
    option that says the same, or the step to take."""
    if key == NO_KEY:
        return UNSETTLED.get(premise_name, "no configuration key settles it")
    if key.startswith("add "):
        return key
    table, _, name = key.partition(".")
    if table in ("versions", "target") and name:
        value = VALUE_HINTS.get(key, '"<version>"' if table == "versions" else '"<value>"')
        option = "<version>" if table == "versions" else "<value>"
        return (
            f"set {name} = {value} under [tool.recovery-lint.{table}] in pyproject.toml (or --{table} {name}={option})"
        )
    if key.startswith("[[jobs]]"):
        return (
            'add a [[tool.recovery-lint.jobs]] table with manifest = "<manifest>" and scripts = ["<script>"] '
            "to pyproject.toml"
        )
    return f"declare {key}"


def unknown_for(premise_name: str, jobs: int, rules: Iterable[str]) -> str:
    """``the NPU platform is unknown for 17 jobs (RL501)``: a premise, how many jobs it kept advice
    from and the rules whose advice it was."""
    return f"{subject(premise_name)} is unknown for {jobs} job{'s' if jobs != 1 else ''} ({', '.join(sorted(rules))})"


def withheld_line(withheld: Iterable[Withheld]) -> str:
    """One line naming what kept advice back (in the user's words), the jobs and rules it concerned
    and the configuration that settles it; '' when nothing was withheld."""
    jobs: dict[tuple[str, str], set[str]] = {}
    codes: dict[tuple[str, str], set[str]] = {}
    for w in withheld:
        key = (w.premise, w.settling_key or w.premise)
        jobs.setdefault(key, set()).add(w.job)
        codes.setdefault(key, set()).add(w.code)
    if not jobs:
        return ""
    parts = []
    for name, key in sorted(jobs, key=lambda k: (-len(jobs[k]), k)):
        parts.append(f"{unknown_for(name, len(jobs[name, key]), codes[name, key])}: {remedy(key, name)}")
    return (
        "Advice withheld: "
        + "; ".join(parts)
        + ". recovery-lint --show-withheld lists where, --show-jobs shows the evidence."
    )
