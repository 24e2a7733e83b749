"""Fix safety, property-tested: ``--fix --unsafe-fixes`` over generated repositories never damages a file.

For every generated repository (see ``tests/strategies.py``) and every fix run:
- no fix is reverted, and every changed file parses with its parser without a new issue;
- every comment of the input is still there (suppression directives excepted: RL901 removes them);
- the bytes outside the applied edits are unchanged (each pass is exactly the splice of its edits);
- line endings are not mixed, a BOM stays, and a second run changes nothing;
- the findings after the fix are the unfixable findings from before: none is new, every fix fixed.

``HYPOTHESIS_PROFILE=long python -m pytest tests/test_fix_properties.py`` runs 25 times as many examples.
"""

from __future__ import annotations

import itertools
import re
import shutil
import tempfile
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import example, given

from recovery_lint.config import Config
from recovery_lint.diagnostics import Diagnostic
from recovery_lint.engine import LintRequest, lint
from recovery_lint.fix import FixOutcome, applicable, fix_loop, splice
from recovery_lint.parse import parse_source
from recovery_lint.registry import all_rules
from recovery_lint.span import SourceText

from .conftest import SHARED, run_cli
from .strategies import comment_tokens, comments_of, line_endings, repositories, scaled

CORPUS = SHARED / "corpus" / "manifests"


def rules():
    return list(all_rules().values())


def write_repo(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode("utf-8"))


def request_for(root: Path) -> LintRequest:
    return LintRequest(paths=[root], cwd=root, config=Config(), rules=rules())


LINE_REF = re.compile(r"\b(lines?|line:)\s*\d+(?:[-–]\d+)?")
CONTAINER_REF = re.compile(r"\bcontainer \S+")
# the watchdog variable's value as a finding quotes it: the operator writes it into the container RL211 renames
WATCHDOG_VALUE = re.compile(r"\(HCCL_ASYNC_ERROR_HANDLING[^)]*\)")


def finding_key(d: Diagnostic) -> tuple[str, str, str]:
    """A finding's identity that does not depend on where lines moved to, nor on a container's name
    (RL211 renames an AscendJob's container to ascend), nor on the watchdog value quoted as evidence
    (the container renamed gets the variables Ascend Operator writes: the claim stays, its evidence
    is the operator's value)."""
    message = CONTAINER_REF.sub("container C", LINE_REF.sub(r"\1 N", d.message))
    return (d.code, d.path, WATCHDOG_VALUE.sub("(HCCL_ASYNC_ERROR_HANDLING V)", message))


def directive_free(comments: Counter[str]) -> Counter[str]:
    return Counter({c: n for c, n in comments.items() if "recovery-lint:" not in c})


def check_fix_safety(root: Path, files: dict[str, str]) -> FixOutcome:
    """Run the fix loop over ``root`` (holding ``files``) and assert every safety property."""
    before = lint(request_for(root))
    kinds = {f.path: f.kind for f in before.files}
    issues_before = {f.path: {LINE_REF.sub("line N", i.message) for i in f.issues} for f in before.files}
    outcome = fix_loop(request_for(root), unsafe=True)
    assert outcome.reverted == [], outcome.reverted
    assert outcome.converged

    # each pass is exactly its edits spliced into the previous text: nothing else moved
    texts = dict(outcome.original)
    for number, applied in enumerate(outcome.passes, start=1):
        for path, edits in applied.items():
            text = texts[path]
            src = SourceText(path, text)
            ordered = sorted(edits, key=lambda e: (e.span.start, e.span.end))
            for e in ordered:
                assert 0 <= e.span.start <= e.span.end <= len(text), (number, path, e)
                assert e.span == src.span(e.span.start, e.span.end), f"edit span built against another text: {e}"
            for a, b in itertools.pairwise(ordered):
                assert a.span.end <= b.span.start, f"overlapping edits in pass {number}: {a} / {b}"
            texts[path] = splice(text, edits)
    final = {p: t for p, t in texts.items() if t != outcome.original.get(p)}
    assert final == outcome.fixed

    for path, new in outcome.fixed.items():
        old = outcome.original[path]
        # the fixed text parses with the same parser, without a new issue
        reparsed = parse_source(SourceText(path, new), kinds[path])
        new_issues = {LINE_REF.sub("line N", i.message) for i in reparsed.issues} - issues_before[path]
        assert not new_issues, f"{path}: the fix introduced {new_issues}\n{new}"
        # every comment survives
        lost = directive_free(comments_of(path, old)) - comments_of(path, new)
        assert not lost, f"{path}: comments lost {dict(lost)}\n--- before\n{old}\n--- after\n{new}"
        lost_tokens = comment_tokens(old) - comment_tokens(new)
        assert not lost_tokens, f"{path}: comment tokens lost {dict(lost_tokens)}\n{new}"
        # line endings: as uniform as before, never a new kind; the BOM stays
        endings_old, endings_new = line_endings(old), line_endings(new)
        assert endings_new <= (endings_old or {"lf"}), f"{path}: line endings {endings_old} -> {endings_new}\n{new!r}"
        assert new.startswith("\ufeff") == old.startswith("\ufeff")
        if path.endswith(".sh"):
            assert "\r" not in new

    # the findings after the fix are the unfixable ones from before
    fixable = [d for d in before.diagnostics if applicable(d.fix, True)]
    unfixable = {finding_key(d) for d in before.diagnostics if not applicable(d.fix, True)}
    after = {finding_key(d) for d in outcome.result.diagnostics}
    # a fix dropped because an earlier pass changed what its rule decides (RL301 refuses torch_npu_run
    # once RL202 armed TaskD) leaves its finding, saying why there is no fix
    fixable_sites = {(d.code, d.path) for d in fixable}
    dropped = {k for k in after if (k[0], k[1]) in fixable_sites and "No fix" in k[2]}
    new_findings = after - unfixable - dropped
    assert not new_findings, (
        f"findings after the fix that were not there (or were fixable) before: {sorted(new_findings)}\n"
        f"fixable before: {sorted(finding_key(d) for d in fixable)}\n"
        + "\n".join(f"--- {p}\n{t}" for p, t in outcome.fixed.items())
    )
    assert not [d for d in outcome.result.diagnostics if applicable(d.fix, True)]

    # a second run over the written result changes nothing
    write_repo(root, outcome.fixed)
    again = fix_loop(request_for(root), unsafe=True)
    assert again.fixed == {}, f"a second run still changes {sorted(again.fixed)}"
    return outcome


RENAMED_CONTAINER_GETS_OPERATOR_ENV = {
    "job.yaml": (
        "apiVersion: mindxdl.gitee.com/v1\nkind: AscendJob\nmetadata:\n  name: gpt3\n"
        '  labels: {fault-scheduling: "off", pod-rescheduling: "on"}\n  annotations:\n'
        "    recover-strategy: recover,dump\nspec:\n  schedulerName: volcano\n  runPolicy:\n"
        "    schedulingPolicy:\n      minAvailable: 2\n  successPolicy: AllWorkers\n  replicaSpecs:\n"
        "    Master:\n      replicas: 1\n      template:\n        metadata:\n          labels:\n"
        "            app: train\n        spec:\n          containers:\n          - name: train\n"
        "            image: swr.example.com/ascend/pytorch:24.0.RC1\n            command:\n"
        '            - /bin/bash\n            - "-c"\n            - cd /job/code; bash /job/code/scripts/train.sh\n'
    ),
    "scripts/train.sh": "pip install torch==2.1.0 torch-npu==2.1.0\ntorchrun --nproc_per_node 8 ../train.py\n",
    "train.py": "import os\n",
}


@scaled(250)
@given(repositories())
@example(RENAMED_CONTAINER_GETS_OPERATOR_ENV)
def test_fix_loop_is_safe_on_generated_repositories(files):
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        write_repo(root, files)
        check_fix_safety(root, files)


FOLDED_SCRIPT = {
    "job.yaml": (
        "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata:\n  name: gpt3\n"
        '  labels: {"fault-scheduling": grace, "pod-rescheduling": "on"}\n'
        "spec:\n  minAvailable: 1\n  schedulerName: volcano\n  tasks:\n  - name: default\n    replicas: 2\n"
        "    template:\n      spec:\n        containers:\n        - name: train\n"
        "          image: swr.example.com/ascend/pytorch:24.0.RC1\n          command:\n"
        '          - /bin/bash\n          - "-c"\n          - >\n'
        "            set -e\n            export HCCL_ASYNC_ERROR_HANDLING=2\n"
        "            RESULT=$(torchrun --nproc_per_node 8 /job/code/train.py)\n"
    ),
    "train.py": "import os\n",
}


def test_lines_inserted_into_a_folded_scalar_stay_commands_of_their_own():
    """A folded scalar (``>``) joins its lines: an inserted ``export`` line would fold into the next
    command (here ``set -e``, whose arguments then export the watchdog value 2): inserted commands
    end with ';' instead (found by the property test above)."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        write_repo(root, FOLDED_SCRIPT)
        outcome = check_fix_safety(root, FOLDED_SCRIPT)
        fixed = outcome.fixed["job.yaml"]
        assert "export RESUME_MODE_ENABLE=1; " in fixed
        assert "            export RESUME_MODE_ENABLE=1\n" not in fixed


@scaled(4)
@given(repositories())
def test_cli_fix_writes_what_the_engine_computed(files):
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        write_repo(root, files)
        expected = fix_loop(request_for(root), unsafe=True)
        result = run_cli("--fix", "--unsafe-fixes", "--isolated", "--output-format", "concise", ".", cwd=root)
        assert result.returncode in (0, 1), result.stderr
        assert "error" not in result.stderr, result.stderr
        for rel, text in files.items():
            on_disk = (root / rel).read_bytes().decode("utf-8")
            assert on_disk == expected.fixed.get(rel, text), rel
        leftovers = [p.name for p in root.rglob("*.tmp")]
        assert not leftovers
        second = run_cli("--fix", "--unsafe-fixes", "--isolated", "--diff", ".", cwd=root)
        assert second.stdout == "", second.stdout


# -- the real manifests ------------------------------------------------------------------------
@pytest.mark.skipif(not CORPUS.is_dir(), reason="the shared corpus of real manifests is not present")
def test_real_manifests_fix_reparse_and_settle(tmp_path):
    manifests = sorted(p for p in CORPUS.iterdir() if p.suffix in (".yaml", ".yml"))
    assert manifests
    for source in manifests:
        shutil.copy(source, tmp_path / source.name)
    originals = {p.name: p.read_bytes() for p in manifests}
    before = lint(request_for(tmp_path))
    kinds = {f.path: f.kind for f in before.files}
    outcome = fix_loop(request_for(tmp_path), unsafe=True)
    assert outcome.reverted == []
    assert outcome.fixed, "the corpus has fixable findings"
    write_repo(tmp_path, outcome.fixed)
    for name, raw in originals.items():
        old = raw.decode("utf-8")
        new = (tmp_path / name).read_bytes().decode("utf-8")
        parsed = parse_source(SourceText(name, new), kinds[name])
        assert [i.message for i in parsed.issues if i.kind == "unreadable"] == [], name
        assert not (comments_of(name, old) - comments_of(name, new)), name
        assert line_endings(new) <= (line_endings(old) or {"lf"}), name
    after = {p.name: p.read_bytes() for p in tmp_path.iterdir() if p.is_file()}
    again = fix_loop(request_for(tmp_path), unsafe=True)
    assert again.fixed == {}
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir() if p.is_file()} == after


# -- regressions found by the properties above ---------------------------------------------------------
ASCENDJOB = """\
apiVersion: mindxdl.gitee.com/v1
kind: AscendJob
metadata:
  name: gpt3
  labels:
    framework: pytorch
    fault-scheduling: grace  # resumable
    pod-rescheduling: "on"
spec:
  replicaSpecs:
    Master:
      replicas: 1
      template:
        spec:
          containers:
          - name: ascend
            image: pytorch:latest
            command: [torchrun, --nproc_per_node=8, /job/code/train.py]
{extra}    Worker:
      replicas: 1
      template:
        spec:
          containers:
          - name: ascend
            image: pytorch:latest
            command: [torchrun, --nproc_per_node=8, /job/code/train.py]
{extra}"""


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_two_fixes_adding_env_to_one_container_give_one_env_list(tmp_path, newline):
    # RL101 and RL103 both add an `env:` list to a container without one: applied in one pass they
    # wrote `env:` twice (a duplicate key, so the whole file was left unfixed)
    text = ASCENDJOB.replace("{extra}", "").replace("\n", newline)
    # release 6.0.rc2 for torch 1.11 leaves the watchdog off by default: RL101 adds its variable
    files = {
        "job.yaml": text,
        "train.py": "import torch\n",
        "requirements.txt": "torch==1.11.0\ntorch-npu==1.11.0.post14\n",
    }
    write_repo(tmp_path, files)
    outcome = check_fix_safety(tmp_path, files)
    fixed = outcome.fixed["job.yaml"]
    assert fixed.count(f"            env:{newline}") == 2  # one per container
    assert fixed.count("name: HCCL_ASYNC_ERROR_HANDLING") == 2 and fixed.count("name: RESUME_MODE_ENABLE") == 2


def test_item_appended_to_a_last_sequence_goes_before_a_new_key(tmp_path):
    # RL310 appends the ranktable mount to a volumeMounts list that ends the container (and the
    # containers list) and adds `volumes:` to the Pod spec at the same offset: the item must come
    # first or the document no longer parses. RL310 fixes a launch written in a script (not one
    # written in the manifest), for a namespace the manifest names and a release that reads
    # RANK_TABLE_FILE.
    extra = "            volumeMounts:\n            - name: code\n              mountPath: /job/code\n"
    job = (
        ASCENDJOB.replace("{extra}", extra)
        .replace("command: [torchrun, --nproc_per_node=8, /job/code/train.py]", "command: [bash, /job/code/train.sh]")
        .replace("  name: gpt3\n", "  name: gpt3\n  namespace: train\n")
    )
    files = {
        "job.yaml": job,
        "train.sh": "export RESUME_MODE_ENABLE=1\ntorch_npu_run --nnodes=2 --nproc_per_node=8 train.py\n",
        "train.py": "import torch\n",
        "requirements.txt": "torch==2.1.0\ntorch-npu==2.1.0.post10\n",
    }
    write_repo(tmp_path, files)
    outcome = check_fix_safety(tmp_path, files)
    fixed = outcome.fixed["job.yaml"]
    assert "              mountPath: /job/code\n            - name: ranktable\n" in fixed
    assert fixed.index("name: ranktable") < fixed.index("volumes:") < fixed.index("Worker:")


def test_a_mounted_ranktable_is_rank_table_mode_for_rl310(tmp_path):
    # a container mounting 'ranktable' is judged by RL311/RL313; RL310 adding a second mount and a
    # second RANK_TABLE_FILE made RL313 report a conflict the fix had created
    extra = "            volumeMounts:\n            - name: ranktable\n              mountPath: /user/serverid/devindex/config\n"
    files = {"job.yaml": ASCENDJOB.replace("{extra}", extra), "train.py": "import torch\n"}
    write_repo(tmp_path, files)
    assert "RL310" not in {d.code for d in lint(request_for(tmp_path)).diagnostics}
    check_fix_safety(tmp_path, files)


SHARED_SCRIPT_JOB = """\
apiVersion: mindxdl.gitee.com/v1
kind: AscendJob
metadata:
  name: gpt3
  labels: {framework: pytorch}
spec:
  replicaSpecs:
    Master:
      replicas: 1
      template:
        spec:
          containers:
          - name: ascend
            image: pytorch:latest
            command: [/bin/bash, -c, bash /job/code/train.sh]
          volumes:
          - name: ranktable
            hostPath:
              path: /user/mindx-dl/ranktable/default.gpt3
    Worker:
      replicas: 1
      template:
        spec:
          containers:
          - name: ascend
            image: pytorch:latest
            command: [/bin/bash, -c, bash /job/code/train.sh]
            env:
            - name: RANK_TABLE_FILE
              value: /user/serverid/devindex/config/hccl.json
"""


def test_ranktable_fixes_agree_across_containers_sharing_a_script(tmp_path):
    # RL311 mounted the Master's table at the default directory while the Worker's RANK_TABLE_FILE
    # named another one, and RL313 then exported a value into the shared script that suits only one
    # of them: each fix created the next finding
    files = {"job.yaml": SHARED_SCRIPT_JOB, "train.sh": "torchrun --nnodes 2 train.py\n", "train.py": "import torch\n"}
    write_repo(tmp_path, files)
    outcome = check_fix_safety(tmp_path, files)
    assert "mountPath: /user/serverid/devindex/config" in outcome.fixed["job.yaml"]
    assert "RL313" not in {d.code for d in outcome.result.diagnostics}


@pytest.mark.parametrize("labels", ["&labels {}", "&labels {app: x}", "!!map {}"])
def test_entry_added_to_an_anchored_or_tagged_flow_mapping(tmp_path, labels):
    # the node of `&labels {}` starts at the anchor: the builder took "labels {" for content and
    # wrote `{, fault-scheduling: "grace"}`, which does not parse
    job = ASCENDJOB.replace("{extra}", "").replace(
        '  labels:\n    framework: pytorch\n    fault-scheduling: grace  # resumable\n    pod-rescheduling: "on"\n',
        f"  labels: {labels}\n",
    )
    job = job.replace("image: pytorch:latest", "image: x\n            resources: {limits: {huawei.com/Ascend910: 8}}")
    files = {"job.yaml": job}
    write_repo(tmp_path, files)
    outcome = check_fix_safety(tmp_path, files)
    assert re.search(
        r"labels: \S+ \{(app: x, )?fault-scheduling: \"force\", pod-rescheduling", outcome.fixed["job.yaml"]
    )


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_removing_a_last_line_directive_leaves_no_carriage_return(tmp_path, newline):
    # RL901 dropped only the "\n" before an unused directive on the last line (no final newline),
    # leaving a lone "\r" at the end of a CRLF file
    # the launch script makes the linter read train.py (a Python file nothing reaches is not parsed)
    files = {
        "train.py": f"import os{newline}x = 1{newline}# recovery-lint: ignore[RL501]",
        "run.sh": "torchrun --nnodes 2 --nproc_per_node 8 train.py\n",
    }
    write_repo(tmp_path, files)
    outcome = check_fix_safety(tmp_path, files)
    assert outcome.fixed["train.py"] == f"import os{newline}x = 1"


def test_a_line_inserted_above_a_replaced_word_composes_in_one_pass():
    """An insertion at the start of a replaced range goes before it; one inside it or at its end waits
    for the next pass, as two insertions at one point do."""
    from recovery_lint.diagnostics import Severity, safe_fix
    from recovery_lint.edits import edit
    from recovery_lint.fix import apply_fixes

    text = "torchrun --nproc_per_node 8 train.py\n"
    src = SourceText("train.sh", text)

    def finding(code, *edits):
        return Diagnostic(code, code, "m", Severity.WARNING, src.span(0, 1), safe_fix("f", *edits))

    above = finding("RL103", edit(src, 0, 0, "export RESUME_MODE_ENABLE=1\n"))
    launcher = finding("RL301", edit(src, 0, 8, "torch_npu_run"))
    new, count = apply_fixes([above, launcher], {"train.sh": text}, unsafe=False)
    assert count == 2
    assert new["train.sh"] == "export RESUME_MODE_ENABLE=1\ntorch_npu_run --nproc_per_node 8 train.py\n"
    inside = finding("RL999", edit(src, 4, 4, "x"))
    at_end = finding("RL998", edit(src, 8, 8, "y"))
    _, count = apply_fixes([launcher, inside, at_end], {"train.sh": text}, unsafe=False)
    assert count == 1


# -- one fix plan: every rule at once on every must-fire case ------------------------------------------
MUST_FIRE = [
    pytest.param(rule, case, id=f"{code}-{i}")
    for code, rule in all_rules().items()
    for i, case in enumerate(rule.cases)
    if case.expect
]


@pytest.mark.parametrize(("rule", "case"), MUST_FIRE)
def test_fixing_with_every_rule_reaches_a_fixed_point_no_rule_objects_to(rule, case, tmp_path):
    """With all rules on, ``--fix --unsafe-fixes`` converges, a second run changes nothing, and what
    is left holds no finding of a rule that was silent on the original files."""
    from recovery_lint.config import config_from_dict
    from recovery_lint.testing import write_case

    write_case(case, tmp_path)
    config = config_from_dict(case.config, None) if case.config else Config()

    def request() -> LintRequest:
        return LintRequest(paths=[tmp_path], cwd=tmp_path, config=config, rules=rules())

    outcome = fix_loop(request(), unsafe=True)
    assert outcome.converged and outcome.reverted == [] and not outcome.result.internal_errors
    before = {d.code for d in outcome.before.diagnostics} if outcome.before else set()
    after = {d.code for d in outcome.result.diagnostics}
    assert after <= before, f"new findings after the fixes: {sorted(after - before)}"
    write_repo(tmp_path, outcome.fixed)
    assert fix_loop(request(), unsafe=True).fixed == {}
