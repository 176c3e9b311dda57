//! What the file tools' patterns mean. eve 0.80.1 runs ripgrep in its sandbox — `rg --files
//! --glob <pattern>` for `glob`, `rg [--ignore-case] [--fixed-strings] [--glob <glob>]
//! <pattern>` for `grep` — so the patterns are ripgrep's own: globs by `globset` and regular
//! expressions by `regex`, the crates ripgrep is built on.

use globset::{GlobBuilder, GlobMatcher};
use regex::{Regex, RegexBuilder};

/// The most a grep pattern may take once compiled (`RegexBuilder::size_limit`): ample for
/// any pattern a person writes, and it keeps a pathological one (`(a{1000}){1000}`) from
/// costing the agent's memory and time.
pub const MAX_REGEX_BYTES: usize = 1 << 20;
/// The most memory grep's lazy DFA may cache while it searches (`dfa_size_limit`).
pub const MAX_REGEX_CACHE_BYTES: usize = 2 << 20;

/// A glob over flat file names (eve's `glob`, and `grep`'s `glob` filter): `*`, `**`, `?`,
/// `[a-z]`, `{a,b}`. A leading `/workspace/`, `$HOME/`, `./`, `/` or `**/` is dropped, since
/// files have no directories: `**/*.csv` and `/workspace/*.csv` mean `*.csv`.
#[derive(Debug, Clone)]
pub struct NameGlob(GlobMatcher);

impl NameGlob {
    /// The glob `pattern`, or why it is not one.
    pub fn new(pattern: &str) -> Result<NameGlob, String> {
        let mut p = pattern.trim();
        for prefix in ["/workspace/", "$HOME/", "./", "/"] {
            p = p.strip_prefix(prefix).unwrap_or(p);
        }
        while let Some(rest) = p.strip_prefix("**/") {
            p = rest;
        }
        GlobBuilder::new(p)
            // ripgrep's globs are gitignore's: `*` stops at `/`. Names have none, so this
            // only keeps a pattern with a directory in it from matching anything.
            .literal_separator(true)
            .build()
            .map(|g| NameGlob(g.compile_matcher()))
            .map_err(|e| format!("invalid glob pattern: {e}"))
    }

    /// Whether the file `name` matches.
    pub fn matches(&self, name: &str) -> bool {
        self.0.is_match(name)
    }
}

/// grep's pattern as a regular expression over one line (ripgrep's syntax: groups, classes,
/// `\d \w \s`, `\b`, Unicode classes…); `literal` matches the text as it is. A pattern that is
/// not one, or too large, is an error the model can act on.
pub fn line_regex(pattern: &str, literal: bool, ignore_case: bool) -> Result<Regex, String> {
    let source = if literal {
        regex::escape(pattern)
    } else {
        pattern.to_string()
    };
    RegexBuilder::new(&source)
        .case_insensitive(ignore_case)
        .size_limit(MAX_REGEX_BYTES)
        .dfa_size_limit(MAX_REGEX_CACHE_BYTES)
        .build()
        .map_err(|e| match e {
            regex::Error::CompiledTooBig(_) => format!(
                "invalid pattern: it is too large once compiled (over {MAX_REGEX_BYTES} bytes): use a simpler pattern"
            ),
            other => format!("invalid pattern: {other}"),
        })
}
