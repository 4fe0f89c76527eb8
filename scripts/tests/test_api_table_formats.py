"""scripts/api-table.py's data rule: a JS type whose doc comment carries an `@format` tag is
one of the core's JSON formats (a config, the source session's actions), spelled as that
format spells it, so its fields (and those of the object types written inline in it) are
not held to the camelCase field rule; a type without the tag still is, and so is a record
beside a format type."""

from __future__ import annotations

from pathlib import Path

from test_api_table import DTS, run, tree

FORMATS = '''
/**
 * A session's settings.
 *
 * @format the core's session config, as the vectors write it.
 */
export interface SessionConfig {
  max_redirects?: number;
}

/**
 * What the shell does next.
 * @format the core's source actions.
 */
export type SourceAction =
  | { send: { id: number; data_b64: string } }
  | { lost: { retry_at: number } };

/** A record a call returns: held to the rule. */
export interface SessionStats {
  refreshFailures: bigint;
}
'''


def test_format_types_keep_the_formats_spelling(tmp_path: Path) -> None:
    root = tree(tmp_path, dts=DTS + FORMATS, listed="py-tuple shardroute:parse_address\n")
    result = run(root, "--check")
    assert "new violation" not in result.stderr, result.stderr
    assert "0 new" in result.stdout


def test_without_the_tag_the_same_fields_are_violations(tmp_path: Path) -> None:
    # The same declarations with the tag spelled otherwise: each snake_case field is caught.
    root = tree(tmp_path, dts=DTS + FORMATS.replace("@format", "@see"), listed="py-tuple shardroute:parse_address\n")
    result = run(root, "--check")
    assert result.returncode == 1
    for violation in ("SessionConfig.max_redirects", "SourceAction.{data_b64}", "SourceAction.{retry_at}"):
        assert f"new violation: js-field bindings-js/index.d.ts:{violation}:" in result.stderr


def test_the_tag_covers_only_the_type_it_documents(tmp_path: Path) -> None:
    # A returned record right after a format type is still held to the rule.
    dts = DTS + FORMATS.replace("refreshFailures", "refresh_failures")
    root = tree(tmp_path, dts=dts, listed="py-tuple shardroute:parse_address\n")
    result = run(root, "--check")
    assert result.returncode == 1
    assert "new violation: js-field bindings-js/index.d.ts:SessionStats.refresh_failures:" in result.stderr
    assert "SessionConfig" not in result.stderr
