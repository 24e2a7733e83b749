"""The block reader (sources/yamlblock.py) gives the nodes libyaml gives, or declines.

Every text it accepts is composed by both readers and compared node by node: kind, value, style,
tag, start and end offsets. Texts come from the bundled fixtures and tests, the shared corpus, the
generated manifests of the property tests, seeded mutations of those, and hand-written cases at
each rule of the reader. The plain-scalar tags it resolves without PyYAML are compared with
PyYAML's resolver."""

from __future__ import annotations

import random

import pytest
import yaml
from hypothesis import HealthCheck, given, settings

from recovery_lint.sources import manifest as manifest_source
from recovery_lint.sources.manifest import _loader, compose_documents, parse_manifest
from recovery_lint.sources.yamlblock import read_block_yaml
from recovery_lint.sources.yamlnodes import PLAIN, resolve_plain
from recovery_lint.span import SourceText

from . import manifests
from .conftest import FIXTURES, SHARED
from .strategies import manifest_text, scaled


def shape(node) -> tuple:
    """What a reader decided about a node, offsets included."""
    if node.id == "scalar":
        return ("scalar", node.tag is PLAIN, None if node.tag is PLAIN else node.tag, node.value,
                node.start_mark.index, node.end_mark.index, node.style or "")  # fmt: skip
    children = (
        tuple((shape(k), shape(v)) for k, v in node.value)
        if node.id == "mapping"
        else tuple(shape(c) for c in node.value)
    )
    return (node.id, node.tag, bool(node.flow_style), node.start_mark.index, node.end_mark.index, children)


def libyaml_shapes(text: str) -> list[tuple] | str:
    loader = _loader()(text)
    try:
        out = []
        while loader.check_node():
            node = loader.get_node()
            if node is not None:
                out.append(shape(node))
        return out
    except yaml.YAMLError:
        return "error"
    finally:
        loader.dispose()


def agrees(text: str) -> bool | None:
    """None when the block reader declines; else whether libyaml composes the same nodes."""
    nodes = read_block_yaml(text, PLAIN)
    if nodes is None:
        return None
    return libyaml_shapes(text) == [shape(n) for n in nodes]


def bundled_texts() -> dict[str, str]:
    texts = {str(p.relative_to(FIXTURES)): p.read_text("utf-8") for p in sorted(FIXTURES.rglob("*.y*ml"))}
    texts.update({name: value for name, value in vars(manifests).items() if name.isupper() and isinstance(value, str)})
    corpus = SHARED / "corpus" / "manifests"
    if corpus.is_dir():
        texts.update({p.name: p.read_text("utf-8") for p in sorted(corpus.iterdir()) if p.is_file()})
    return texts


def test_bundled_and_corpus_manifests_read_as_libyaml_reads_them():
    texts = bundled_texts()
    results = {name: agrees(text) for name, text in texts.items()}
    assert [name for name, same in results.items() if same is False] == []
    assert sum(1 for same in results.values() if same) >= 0.8 * len(texts)  # the shape manifests have


@settings(scaled(60), suppress_health_check=list(HealthCheck))
@given(manifest_text(script_ref="scripts/train.sh", entry_ref="train.py", counter=[0]))
def test_generated_manifests_read_as_libyaml_reads_them(text):
    assert agrees(text) is not False


MUTATIONS = (" ", "  ", "\n", ":", ": ", "-", "- ", "#", " #", "|", "|-", "|+", "|2", '"', "'", "[", "]", "{",
             "}", ",", "\t", "a", "x: y", "\n  ", "\n-", "---", "\\", '""', "''", "...", "\n\n", "?", "&a", "*a",
             "!t", "%", ">", "0", "~", "é", "中")  # fmt: skip


@pytest.mark.parametrize("seed", range(4))
def test_mutated_manifests_are_read_as_libyaml_reads_them_or_declined(seed):
    rng = random.Random(seed)
    seeds = [t for t in bundled_texts().values() if read_block_yaml(t, PLAIN) is not None]
    accepted = 0
    for _ in range(1500):
        text = rng.choice(seeds)
        for _ in range(rng.randint(1, 5)):
            at = rng.randrange(len(text) + 1)
            if rng.random() < 0.5:
                text = text[:at] + rng.choice(MUTATIONS) + text[at:]
            else:
                text = text[:at] + text[at + rng.randint(1, 4) :]
        same = agrees(text)
        assert same is not False, text
        accepted += same is True
    assert accepted > 300  # the mutations test the reader, not only its refusals


ACCEPTED = {
    "empty value: ends at its colon": "a:\nb: 1\nc:\n",
    "indentless sequence ends at the next key": "a:\n- x\n- y\nb: 2\n",
    "compact mappings in a sequence": "- name: a\n  value: 1\n- name: b\n",
    "nested blocks end at the next token": "a:\n  b:\n    c: 1\n  # note\nd: 2\n",
    "flow collections": 'a: [x, "y", {k: v}]\nb: {}\nc: []\n',
    "quoted scalars and escapes": "a: 'it''s'\nb: \"tab\\tnl\\n\\x41\\u00e9\\U0001F600\"\n\"k\": v\n",
    "literal keep with trailing blank lines": "a: |+\n  x\n\n\nb: 1\n",
    "literal strip": "a: |-\n  x\n  y\n",
    "literal with an indentation digit": "a: |2\n    x\n  y\n",
    "literal ending the text without a break": "a: |\n  x",
    "literal followed by a line of spaces at the end": "- |\n  x\n  ",
    "a line of spaces as deep as the literal is a blank line": "a: |\n    x\n    \nb: 1\n",
    "several documents": "a: 1\n---\nb: 2\n---\n# only a comment before\nc: 3\n",
    "comments and blank lines only": "# nothing\n\n",
    "printable text beyond ASCII": "名前: 値 # 注釈\n",
    "a value on the next line": "a:\n  plain text\nb:\n  - x\n",
}
DECLINED = {
    "folded scalar": "a: >\n  x\n",
    "anchor and alias": "a: &x 1\nb: *x\n",
    "tag": "a: !!str 1\n",
    "plain scalar over two lines": "a: hello\n  world\n",
    "quoted scalar over two lines": 'a: "hello\n  world"\n',
    "flow over two lines": "a: [x,\n  y]\n",
    "empty document": "---\n---\na: 1\n",
    "trailing document marker": "a: 1\n---\n",
    "document end marker": "a: 1\n...\n",
    "directive": "%YAML 1.1\n---\na: 1\n",
    "tab between tokens": "a: 1\n\t\nb: 2\n",
    "carriage returns": "a: 1\r\nb: 2\r\n",
    "tab where the literal's indentation is found": "a: |\n   \tx\n",
    "explicit key": "? a\n: b\n",
    "a scalar document": "just text\n",
    "compact nested sequence": "- - a\n",
    "syntax error": "a: b: c\n",
    "bad indentation": "a:\n  b: 1\n c: 2\n",
}


@pytest.mark.parametrize("text", ACCEPTED.values(), ids=ACCEPTED.keys())
def test_each_rule_of_the_reader_matches_libyaml(text):
    assert agrees(text) is True


@pytest.mark.parametrize("text", DECLINED.values(), ids=DECLINED.keys())
def test_what_the_reader_does_not_take_is_left_to_libyaml(text):
    assert read_block_yaml(text, PLAIN) is None


def test_a_declined_manifest_is_composed_by_libyaml(monkeypatch):
    monkeypatch.setattr(manifest_source, "_block_reads", 0)
    src = SourceText("job.yaml", "kind: Job\nspec: &s\n  a: 1\nother: *s\n")
    nodes, issues = compose_documents(src)
    assert issues == [] and nodes[0].get("other").get("a").value == "1"


def test_a_process_reads_a_few_manifests_without_pyyaml_then_hands_over_to_libyaml(monkeypatch):
    read: list[str] = []
    block = manifest_source._compose_block
    monkeypatch.setattr(manifest_source, "_block_reads", 0)
    monkeypatch.setattr(manifest_source, "_compose_block", lambda src: read.append(src.path) or block(src))
    text = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n"
    for i in range(manifest_source.BLOCK_READS + 3):
        assert parse_manifest(SourceText(f"m{i}.yaml", text)).docs[0].name.value == "a"
    assert len(read) == manifest_source.BLOCK_READS


def test_plain_scalar_tags_are_pyyamls():
    resolver = yaml.resolver.Resolver()
    rng = random.Random(7)
    alphabet = "0123456789-+._:eExXbBtTfFnNyYoO~<=!&* \tZaAlsuUlL\n"
    values = ["", "~", "null", "Null", "yes", "No", "on", "OFF", "true", "0", "07", "08", "0b1", "0x1F", "1_000",
              "1:20", "1:20.5", ".5", "-.inf", ".NaN", "1e5", "1.0e+5", "2001-12-14", "2001-12-14 21:59:43.10 -5",
              "<<", "=", "!", "a", "1\n", "yes\n", "07\n", "08", "-", "+", "-a", "+.5", "-x\n", "~\n", "null\n", "nul", "Off", "0\n"]  # fmt: skip
    values += ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 8))) for _ in range(40000)]
    wrong = [v for v in values if resolve_plain(v) != resolver.resolve(yaml.ScalarNode, v, (True, False))]
    assert wrong == []
