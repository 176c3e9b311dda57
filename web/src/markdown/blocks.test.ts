import assert from "node:assert/strict";
import { test } from "node:test";
import { Marked } from "marked";
import { BlockSplitter, MARKED_OPTIONS, isClosedFence, type Block } from "./blocks";

const marked = new Marked(MARKED_OPTIONS);
const html = (blocks: Block[]) => blocks.map((b) => (b.tokens.length ? marked.parser(b.tokens) : "")).join("");

const SAMPLES: Record<string, string> = {
  mixed: [
    "# Title",
    "Intro paragraph with **bold**, `code` and a [link](https://example.com).",
    "",
    "- one",
    "- two",
    "",
    "- still the same list",
    "",
    "1. first",
    "2. second",
    "",
    "```js",
    "const x = 1;",
    "",
    "console.log(x);",
    "```",
    "After the fence.",
    "",
    "| a | b |",
    "|---|---|",
    "| 1 | 2 |",
    "",
    "> quoted",
    "lazy continuation",
    "",
    "Setext",
    "------",
    "",
    "    indented code",
    "",
    "    more indented code",
    "",
    "---",
    "end with a [ref][r].",
    "",
    "[r]: https://example.org",
    "",
  ].join("\n"),
  headingsWithoutBlankLines: "## One\ntext one\n## Two\ntext two\n#notaheading\n### Three\n",
  fenceWithTildesAndLongerClose: "~~~python\nprint('a')\n~~~~\nafter\n\n````\n```\nstill code\n````\n",
  html: "<div>\n*not md*\n</div>\n\n<!-- a comment\n\nstill comment -->\n\ntext\n",
  crlf: "a\r\n\r\nb\r\n- c\r\n",
};

function stream(text: string, size: (i: number) => number): { blocks: Block[]; tail: Block; resets: number } {
  const splitter = new BlockSplitter();
  const blocks: Block[] = [];
  let tail: Block = { raw: "", tokens: Object.assign([], { links: {} }) };
  let resets = 0;
  for (let i = 0, n = 0; i < text.length; n++) {
    i = Math.min(text.length, i + size(n));
    const u = splitter.update(text.slice(0, i));
    if (u.reset) {
      resets++;
      blocks.length = 0;
    }
    blocks.push(...u.added);
    tail = u.tail;
  }
  return { blocks, tail, resets };
}

for (const [name, text] of Object.entries(SAMPLES)) {
  test(`streamed blocks render as the whole text does: ${name}`, () => {
    const whole = marked.parse(text.replace(/\r\n/g, "\n")) as string;
    for (const [how, size] of [
      ["char by char", () => 1],
      ["3-char deltas", () => 3],
      ["uneven deltas", (n: number) => 1 + ((n * 7) % 11)],
      ["all at once", () => text.length],
    ] as const) {
      const { blocks, tail, resets } = stream(text, size);
      if (!/^\[[^\]]+\]:/m.test(text)) assert.equal(resets, 0, `${how}: an append-only stream without link definitions never starts over`);
      assert.equal([...blocks, tail].map((b) => b.raw).join(""), text.replace(/\r\n/g, "\n"), `${how}: blocks cover the text`);
      assert.equal(html([...blocks, tail]), whole, `${how}: same HTML`);
    }
  });
}

test("a block is committed only once it cannot change", () => {
  const s = new BlockSplitter();
  // "#" alone is an empty heading, but "#bar" turns it into paragraph text: nothing commits.
  assert.equal(s.update("foo\n#").added.length, 0);
  assert.equal(s.update("foo\n#bar").added.length, 0);
  assert.equal(s.update("foo\n#bar\n\nnext").added.map((b) => b.raw).join(""), "foo\n#bar\n\n");
  assert.equal(s.committed, 1);
  // An open fence stays in the tail however long it grows, blank lines included.
  const f = new BlockSplitter();
  assert.equal(f.update("```rust\nfn main() {}\n\n\nmore").added.length, 0);
  assert.equal(f.update("```rust\nfn main() {}\n\n\nmore\n```\nafter").added.length, 1);
  assert.equal(f.committed, 1);
});

test("each update lexes only the tail: committed blocks are never re-emitted", () => {
  const s = new BlockSplitter();
  let text = "";
  const seen: string[] = [];
  for (let i = 0; i < 200; i++) {
    text += `Paragraph ${i} with some words.\n\n`;
    const u = s.update(text);
    assert.equal(u.reset, false);
    seen.push(...u.added.map((b) => b.raw));
    assert.ok(u.tail.raw.length < 40, `the tail stays one paragraph (${u.tail.raw.length})`);
  }
  assert.equal(seen.length + 1, 200);
  assert.equal(new Set(seen).size, seen.length);
});

test("text that is not an extension of the last update starts over", () => {
  const s = new BlockSplitter();
  s.update("a\n\nb\n\nc");
  const u = s.update("x\n\ny");
  assert.equal(u.reset, true);
  assert.deepEqual(u.added.map((b) => b.raw), ["x\n\n"]);
  assert.equal(u.tail.raw, "y");
});

test("closed fences", () => {
  const lex = (src: string) => new BlockSplitter().update(src).tail.tokens.find((t) => t.type !== "space");
  assert.equal(isClosedFence(lex("```js\nx\n```")), true);
  assert.equal(isClosedFence(lex("```js\nx\n``")), false);
  assert.equal(isClosedFence(lex("````\nx\n```")), false);
  assert.equal(isClosedFence(lex("~~~\nx\n```")), false);
  assert.equal(isClosedFence(lex("```")), false);
  assert.equal(isClosedFence(lex("text")), false);
});
