"""The rule index a run selects and schedules from is the rules' own description of themselves, and a
run imports a rule only when it runs one of its hooks."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from recovery_lint import registry
from recovery_lint.schemas import read_text

INDEX = Path(__file__).parent.parent / "schemas" / registry.INDEX_FILE


def test_the_index_is_written_from_the_rules():
    assert read_text(registry.INDEX_FILE) == registry.index_text(), (
        "the rule index is out of date: python -m recovery_lint.registry > schemas/rule_index.json"
    )
    assert INDEX.read_text(encoding="utf-8") == registry.index_text()


def test_an_indexed_rule_is_the_rule_itself_once_loaded():
    rules = registry.all_rules()
    for code, indexed in registry.indexed_rules().items():
        rule = rules[code]
        assert indexed.load() is rule
        assert (indexed.name, indexed.premises, indexed.also_asks, indexed.hooks) == (
            rule.name,
            rule.premises,
            rule.also_asks,
            rule.hooks,
        )
        assert indexed.severity is rule.severity  # anything else is the rule's own


def test_selection_and_the_selectors_use_the_index():
    chosen = registry.select(["RL3"], ["RL301"], ["RL101"])
    assert [r.code for r in chosen] == [
        "RL101",
        *sorted(c for c in registry.rule_codes() if c.startswith("RL3") and c != "RL301"),
    ]
    assert registry.is_known_selector("torchrun-without-parallel-store")
    assert not registry.is_known_selector("RL999")


# the bench's small manifest (one Pod, `python train.py`): the start-up target is measured on it
SMALL_MANIFEST = Path(__file__).parent.parent / "bench" / "small_manifest.yaml"
# the console script's run, then the rule modules it imported (it leaves through os._exit)
_RUN = """\
import os, sys
from recovery_lint.console import main
sys.argv = ["recovery-lint", "--isolated", "--no-cache", "--output-format", "concise", "job.yaml"]
leave = os._exit

def report(code):
    loaded = sorted(m.rpartition(".")[2] for m in sys.modules if m.startswith("recovery_lint.rules."))
    print("loaded=" + ",".join(loaded), flush=True)
    leave(code)

os._exit = report
main()
"""


def test_a_rule_whose_premises_fail_for_every_job_is_not_imported(tmp_path):
    (tmp_path / "job.yaml").write_text(SMALL_MANIFEST.read_text(encoding="utf-8"))
    result = subprocess.run([sys.executable, "-c", _RUN], cwd=tmp_path, capture_output=True, text=True)
    loaded = result.stdout.rpartition("loaded=")[2].split()[0].split(",")
    # one Pod: multi-node fails (RL301, RL316); no Python entry: the MindIO ACP stack and an NPU entry
    # are not known to be there (RL401-RL403, RL501, RL502); no torch_npu_run launch (RL302); no
    # fault-scheduling: no rescheduling (RL103, RL202-RL204); no suppression directive to check
    # (RL901, RL902); nothing the parsers found (RL900, RL903, RL904)
    not_run = {
        "rl301_torchrun_without_parallel_store",
        "rl316_host_network_without_hccl_if_ip",
        "rl401_blocking_checkpoint_save",
        "rl402_checkpoint_load_from_storage",
        "rl501_operator_jit_compile",
        "rl502_compile_mode_conflict",
        "rl403_mindio_unsupported_version",
        "rl302_parallel_store_unsupported_version",
        "_compile",
        "rl103_resume_mode_disabled",
        "rl202_job_level_rescheduling",
        "rl203_pod_rescheduling_restarts_job",
        "rl204_configmap_ranktable_with_pod_rescheduling",
        "rl90x_suppressions",
        "rl900_parse_error",
        "rl903_templated_manifest",
        "rl904_non_bash_script",
        "_mindio",
    }
    assert not_run & set(loaded) == set()
    assert "rl101_watchdog_disabled" in loaded and "rl201_resumable_training_off" in loaded  # the others ran
