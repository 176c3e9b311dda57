// Splits streamed Markdown into top-level blocks that can no longer change (committed) and the
// tail that the next delta may still rewrite. Re-lexing only the text after the last committed
// block keeps each delta's cost proportional to the tail, not to the whole answer.
// No DOM here, so it is unit-tested under node (markdown-blocks.test.ts).
import { Lexer, type Token, type Tokens, type TokensList } from "marked";

export const MARKED_OPTIONS = { gfm: true, breaks: false, async: false } as const;

export interface Block {
  raw: string;
  /** Lexed with the link definitions seen so far, ready for `marked.parser`. */
  tokens: TokensList;
}

export interface Update {
  /** The committed list was rebuilt from scratch (the text was not an extension of the last). */
  reset: boolean;
  /** Blocks committed by this update, in order, after the ones committed before. */
  added: Block[];
  tail: Block;
}

function normalize(text: string): string {
  return text.replace(/\r\n|\r/g, "\n");
}

const FENCE = /^ {0,3}(`{3,}|~{3,})/;

/** Whether nothing appended after `token` can change how it parses, given that a non-space
 * token follows it and `gap` is the whitespace between them. */
function closed(token: Token, gap: string): boolean {
  // A blank line ends every block except fenced code, HTML blocks and lists, and those three
  // only stop being the last token once they really ended (a fence or comment left open runs to
  // the end of the text; a list swallows whatever could continue it).
  if (/\n[ \t]*\n[ \t]*$/.test(token.raw + gap)) return true;
  switch (token.type) {
    case "heading":
    case "hr":
      return true;
    case "code":
      return isClosedFence(token);
    default:
      return false;
  }
}

/** Whether `token` is fenced code whose closing fence has arrived. */
export function isClosedFence(token: Token | undefined): boolean {
  if (!token || token.type !== "code") return false;
  const lines = token.raw.replace(/\n+$/, "").split("\n");
  const open = FENCE.exec(lines[0]);
  if (!open || lines.length < 2) return false;
  const close = /^ {0,3}(`+|~+)[ \t]*$/.exec(lines[lines.length - 1]);
  return !!close && close[1][0] === open[1][0] && close[1].length >= open[1].length;
}

function normalTag(tag: string): string {
  return tag.toLowerCase().replace(/\s+/g, " ");
}

export class BlockSplitter {
  private committedSrc = "";
  private links: TokensList["links"] = Object.create(null);
  private count = 0;
  private tailDefs = "[]";

  /** How many blocks are committed. */
  get committed(): number {
    return this.count;
  }

  update(input: string): Update {
    const text = normalize(input);
    let reset = false;
    if (!text.startsWith(this.committedSrc)) {
      this.committedSrc = "";
      this.links = Object.create(null);
      this.count = 0;
      this.tailDefs = "[]";
      reset = true;
    }
    const rest = text.slice(this.committedSrc.length);
    const tokens = this.lex(rest);
    // Keep everything uncommitted if the tokens do not reproduce the text exactly: the offsets
    // below would be wrong.
    if (tokens.map((t) => t.raw).join("") !== rest) return { reset, added: [], tail: this.block(tokens, rest) };

    const added: Block[] = [];
    let start = 0;
    for (;;) {
      let i = start;
      while (i < tokens.length && tokens[i].type === "space") i++;
      if (i >= tokens.length) break;
      let j = i + 1;
      let gap = "";
      while (j < tokens.length && tokens[j].type === "space") gap += tokens[j++].raw;
      if (j >= tokens.length || !closed(tokens[i], gap)) break;
      const group = tokens.slice(start, j);
      const raw = group.map((t) => t.raw).join("");
      added.push(this.block(group, raw));
      this.committedSrc += raw;
      start = j;
    }
    const tailTokens = tokens.slice(start);
    // A link definition still in the tail (perhaps half-streamed) can resolve a reference in a
    // block committed by an earlier update: when the tail's definitions change, render those
    // blocks again. Rare in model output, and only while a definition line streams.
    const defs = JSON.stringify(tailTokens.filter((t) => t.type === "def").map((t) => [(t as Tokens.Def).tag, (t as Tokens.Def).href, (t as Tokens.Def).title]));
    if (!reset && defs !== this.tailDefs && this.count > 0 && this.committedSrc.includes("]")) {
      this.committedSrc = "";
      this.links = Object.create(null);
      this.count = 0;
      return { ...this.update(text), reset: true };
    }
    this.tailDefs = defs;
    this.count += added.length;
    for (const b of added) for (const t of b.tokens) if (t.type === "def") this.rememberDef(t as Tokens.Def);
    return { reset, added, tail: this.block(tailTokens, tailTokens.map((t) => t.raw).join("")) };
  }

  private lex(src: string): Token[] {
    const lexer = new Lexer(MARKED_OPTIONS);
    Object.assign(lexer.tokens.links, this.links);
    return [...lexer.lex(src)];
  }

  private rememberDef(def: Tokens.Def) {
    const tag = normalTag(def.tag);
    if (!(tag in this.links)) this.links[tag] = { href: def.href, title: def.title };
  }

  private block(tokens: Token[], raw: string): Block {
    const list = tokens as TokensList;
    list.links = this.links;
    return { raw, tokens: list };
  }
}
