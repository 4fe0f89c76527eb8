"""docs/dictionary.schema.json against every committed example of the dictionary format:
docs/examples/dictionary-*.json and every vbucket topology of the conformance vectors.
Each example must also load in the core (through the Python package), and documents the
core rejects for shape reasons must be rejected by the schema too."""

import json
import pathlib

import jsonschema
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCHEMA = json.loads((ROOT / "docs" / "dictionary.schema.json").read_text())
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)


def examples():
    for path in sorted((ROOT / "docs" / "examples").glob("dictionary-*.json")):
        if path.name.endswith(".plan.json"):
            continue
        yield path.name, json.loads(path.read_text())
    for path in sorted((ROOT / "conformance" / "vectors").glob("*.json")):
        vectors = json.loads(path.read_text())
        for name, document in vectors["topologies"].items():
            if document.get("strategy", {}).get("type") == "vbucket":
                yield f"{path.name}:{name}", document


EXAMPLES = list(examples())


def test_the_schema_is_a_valid_draft_2020_12_schema():
    jsonschema.Draft202012Validator.check_schema(SCHEMA)


def test_there_are_examples_of_every_feature():
    text = json.dumps([document for _, document in EXAMPLES])
    for feature in ["forward_map", "states", "overrides", "checksum", '"failed"', "placement", "hot_keys"]:
        assert feature in text, f"no committed dictionary example uses {feature}"
    assert len(EXAMPLES) >= 10


@pytest.mark.parametrize("name,document", EXAMPLES, ids=[name for name, _ in EXAMPLES])
def test_every_committed_example_matches_the_schema_and_loads(name, document):
    errors = sorted(VALIDATOR.iter_errors(document), key=lambda e: list(e.path))
    assert not errors, f"{name}: " + "; ".join(f"{list(e.path)}: {e.message}" for e in errors)
    import shardroute

    shardroute.Router(document)


@pytest.mark.parametrize(
    "change",
    [
        lambda d: d.update(shards=3),
        lambda d: d["nodes"][0].update(wieght=2),
        lambda d: d["nodes"][0].update(state="sleeping"),
        lambda d: d["strategy"].update(type="ring"),
        lambda d: d["strategy"].update(states={"x": "migrating"}),
        lambda d: d["strategy"].update(map=[["cb-1", "cb-1"]] * 16),
        lambda d: d.update(checksum="md5:abc"),
        lambda d: d.update(epoch=-1),
        lambda d: d.update(nodes=[]),
    ],
)
def test_the_schema_rejects_what_the_core_rejects(change):
    document = json.loads((ROOT / "docs" / "examples" / "dictionary-explicit.json").read_text())
    change(document)
    assert list(VALIDATOR.iter_errors(document)), "the schema accepted a broken document"
    import shardroute

    with pytest.raises(shardroute.ShardrouteError):
        shardroute.Router(document)
