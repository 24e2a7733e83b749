"""JUnit XML for CI test reports: one failing test case per finding that fails the run (``--fail-on``),
named by its rule and place and classed by its file, and one passing test case for each linted file
without such a finding; findings below the threshold are listed in a ``system-out`` of their file's
first test case. CI dashboards count one failure per test case, so each finding is a case of its own."""

from __future__ import annotations

import re
from collections.abc import Iterable

from ..diagnostics import Diagnostic
from . import fails, fix_hint

# Characters XML 1.0 cannot carry at all (control characters other than tab, LF, CR; lone surrogates).
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def _clean(text: str) -> str:
    return _NOT_XML.sub("\ufffd", text)


def _text(d: Diagnostic) -> str:
    s = d.span
    lines = [f"{d.path}:{s.line}:{s.column}: {d.code} {d.name} [{d.severity.value}] {d.message}"]
    for related in d.related:
        r = related.span
        lines.append(f"  note: {r.path}:{r.line}:{r.column}: {related.message}")
    if d.job:
        lines.append(f"  job: {d.job}")
    if d.fix is not None:
        lines.append(f"  help: {fix_hint(d.fix)}")
    return "\n".join(lines) + "\n"


def render(diagnostics: list[Diagnostic], *, files: Iterable[str], fail_on: str = "warning") -> str:
    import xml.etree.ElementTree as ET

    by_path: dict[str, list[Diagnostic]] = {}
    for path in files:
        by_path.setdefault(path, [])
    for d in diagnostics:
        by_path.setdefault(d.path, []).append(d)
    failing = {path: [d for d in found if fails(d.severity, fail_on)] for path, found in by_path.items()}
    failures = sum(len(found) for found in failing.values())
    tests = sum(len(found) or 1 for found in failing.values())
    suites = ET.Element("testsuites", name="recovery-lint", tests=str(tests), failures=str(failures))
    suite = ET.SubElement(
        suites,
        "testsuite",
        name="recovery-lint",
        tests=str(tests),
        failures=str(failures),
        errors="0",
        skipped="0",
    )
    for path in sorted(by_path):
        below = [_text(d) for d in by_path[path] if not fails(d.severity, fail_on)]
        cases = []
        for d in failing[path]:
            s = d.span
            case = ET.SubElement(
                suite,
                "testcase",
                classname=_clean(path),
                name=_clean(f"{d.code} {d.name} at {path}:{s.line}:{s.column}"),
                file=_clean(path),
                line=str(s.line),
            )
            failure = ET.SubElement(case, "failure", message=_clean(f"{d.code} {d.headline}"), type=d.code)
            failure.text = _clean(_text(d))
            cases.append(case)
        if not cases:
            cases.append(ET.SubElement(suite, "testcase", classname=_clean(path), name=_clean(path), file=_clean(path)))
        if below:
            ET.SubElement(cases[0], "system-out").text = _clean("".join(below))
    ET.indent(suites)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(suites, encoding="unicode") + "\n"


SUMMARY_TO_STDERR = True
SCORECARD_SECTION = False


def document(view) -> str:
    return render(view.diagnostics, files=view.linted, fail_on=view.fail_on)
