//! The agent's file tools with eve 0.80.1's names and input shapes — `read_file {filePath,
//! offset?, limit?}`, `write_file {filePath, content}`, `glob {pattern, path?, limit?}`,
//! `grep {pattern, glob?, ignoreCase?, literal?, limit?, context?, path?}` — over the files of
//! one scope (the chat's project, or its session outside a project). Paths are eve's
//! `/workspace/<name>`; files are flat.
//!
//! `write_file` writes `temp` files only: a `user_upload` or `final_output` of that name is a
//! tool error the model sees (the second seed's write guard). Each write is one statement.

use eve_api::projects::FileSource;
use eve_store::sql::Sql;
use eve_store::time::Millis;
use serde_json::{json, Value};

use crate::files::{self, NewFile, WriteRefused};
use crate::names;
use crate::patterns::{self, NameGlob};
use crate::query_table;

/// The tools' names.
pub const READ_FILE: &str = "read_file";
pub const WRITE_FILE: &str = "write_file";
pub const GLOB: &str = "glob";
pub const GREP: &str = "grep";
pub const NAMES: [&str; 5] = [READ_FILE, WRITE_FILE, GLOB, GREP, query_table::NAME];

/// eve's defaults: lines per read, the longest line shown at once.
pub const DEFAULT_READ_LINES: usize = 2000;
pub const MAX_LINE_CHARS: usize = 2000;
/// The most characters one read returns (the rest: read on from `nextOffset`).
pub const MAX_READ_CHARS: usize = 50_000;
/// grep reads at most this much of each file, and of all files together in one call, and
/// answers at most [`MAX_GREP_CHARS`]: a call's memory stays a few MiB whatever the files.
pub const MAX_GREP_BYTES: usize = 2 * 1024 * 1024;
pub const MAX_GREP_TOTAL_BYTES: usize = 8 * 1024 * 1024;
pub const MAX_GREP_CHARS: usize = MAX_READ_CHARS;

/// What the tools work on.
pub struct FileScope<'a, S: Sql> {
    pub db: &'a S,
    pub principal: &'a str,
    /// `project:<id>` or `session:<id>`.
    pub scope: &'a str,
    pub now: Millis,
    /// The principal's default storage cap (`principal_max_bytes`).
    pub storage_max: u64,
    /// The largest file the agent may write (`attachment_max_bytes`, today's per-file cap).
    pub file_max: u64,
    /// A fresh id for a new file.
    pub new_id: &'a dyn Fn() -> String,
}

impl<S: Sql> FileScope<'_, S> {
    /// `content` as a file of this scope, written now within the principal's storage.
    fn new_file<'b>(
        &'b self,
        id: &'b str,
        name: &'b str,
        media_type: &'b str,
        content: &str,
    ) -> NewFile<'b> {
        NewFile {
            principal: self.principal,
            scope: self.scope,
            id,
            name,
            media_type,
            data: content.as_bytes().to_vec(),
            now: self.now,
            default_max: self.storage_max,
        }
    }
}

/// A tool's answer: its output and whether it is an error.
pub type Outcome = (Value, bool);

fn error(message: impl Into<String>) -> Outcome {
    (json!({ "error": message.into() }), true)
}

/// The specs offered to the model (eve's input schemas).
pub fn specs() -> Vec<(String, String, Value)> {
    vec![
        (READ_FILE.into(),
         "Reads a file of this chat's project (or of this chat outside a project) as numbered lines `<line>: <content>`. offset is the 1-based line to start from, limit the number of lines (default 2000); a line over 2000 characters counts as several lines. Large tool outputs kept as files are read this way too.".into(),
         json!({"type":"object","properties":{
             "filePath":{"type":"string","description":"/workspace/<name> (glob lists the names)"},
             "offset":{"type":"integer","minimum":1,"description":"1-based line number to start from. Defaults to 1."},
             "limit":{"type":"integer","minimum":1,"description":"Maximum number of lines to return. Defaults to 2000."}},
             "required":["filePath"],"additionalProperties":false})),
        (WRITE_FILE.into(),
         "Writes a complete file (creates it, or replaces a file you wrote earlier). Files the user uploaded or marked final cannot be written: write a new file instead.".into(),
         json!({"type":"object","properties":{
             "content":{"type":"string","description":"Complete replacement file contents."},
             "filePath":{"type":"string","description":"/workspace/<name>"}},
             "required":["content","filePath"],"additionalProperties":false})),
        (GLOB.into(),
         "Lists the project's files whose names match a glob pattern (e.g. \"*.csv\", \"**/*\").".into(),
         json!({"type":"object","properties":{
             "pattern":{"type":"string","description":"The glob pattern to match file names against."},
             "path":{"type":"string","description":"Defaults to /workspace (the only directory)."},
             "limit":{"type":"integer","minimum":1,"maximum":1000,"description":"Maximum number of results. Defaults to 100."}},
             "required":["pattern"],"additionalProperties":false})),
        (GREP.into(),
         "Searches the contents of the project's text files with a regular expression (full regex syntax, e.g. \"log.*Error\", \"function\\s+\\w+\"); returns matching lines as `<path>:<line>: <text>`.".into(),
         json!({"type":"object","properties":{
             "pattern":{"type":"string","description":"The regex pattern to search for in file contents (e.g. \"log.*Error\", \"^(a|b),\\d+\")."},
             "glob":{"type":"string","description":"Filter files by glob pattern (e.g. \"*.csv\", \"*.{csv,tsv}\")."},
             "ignoreCase":{"type":"boolean","description":"Perform case-insensitive search. Defaults to false."},
             "literal":{"type":"boolean","description":"Treat the pattern as a literal string instead of a regular expression. Defaults to false."},
             "limit":{"type":"integer","minimum":1,"maximum":1000,"description":"Maximum matches per file. Defaults to 100."},
             "context":{"type":"integer","minimum":0},
             "path":{"type":"string","description":"Defaults to /workspace; or one file."}},
             "required":["pattern"],"additionalProperties":false})),
        query_table::spec(),
    ]
}

/// Runs file tool `name` (one of [`NAMES`]).
pub fn run<S: Sql>(fs: &FileScope<'_, S>, name: &str, input: &Value) -> Outcome {
    let str_arg = |k: &str| input.get(k).and_then(Value::as_str);
    let num_arg = |k: &str| input.get(k).and_then(Value::as_u64).map(|n| n as usize);
    match name {
        READ_FILE => match str_arg("filePath") {
            Some(p) => read_file(fs, p, num_arg("offset").unwrap_or(1), num_arg("limit")),
            None => error("read_file needs a filePath"),
        },
        WRITE_FILE => match (str_arg("filePath"), str_arg("content")) {
            (Some(p), Some(c)) => write_file(fs, p, c),
            _ => error("write_file needs a filePath and a content"),
        },
        GLOB => match str_arg("pattern") {
            Some(p) => glob_files(fs, p, num_arg("limit").unwrap_or(100).clamp(1, 1000)),
            None => error("glob needs a pattern"),
        },
        GREP => match str_arg("pattern") {
            Some(p) => grep(fs, p, input),
            None => error("grep needs a pattern"),
        },
        query_table::NAME => query_table::run(fs.db, fs.principal, fs.scope, input),
        other => error(format!("unknown tool {other:?}")),
    }
}

/// Lines as `read_file` counts them: a line over [`MAX_LINE_CHARS`] is several.
fn lines(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    for line in text.lines() {
        let mut rest = line;
        loop {
            let cut = rest
                .char_indices()
                .nth(MAX_LINE_CHARS)
                .map_or(rest.len(), |(i, _)| i);
            out.push(&rest[..cut]);
            rest = &rest[cut..];
            if rest.is_empty() {
                break;
            }
        }
    }
    out
}

fn read_file<S: Sql>(
    fs: &FileScope<'_, S>,
    path: &str,
    offset: usize,
    limit: Option<usize>,
) -> Outcome {
    let name = match names::from_tool_path(path) {
        Ok(n) => n,
        Err(e) => return error(e),
    };
    let file = match files::read_by_name(fs.db, fs.principal, fs.scope, &name) {
        Ok(Some(f)) => f,
        Ok(None) => return error(format!("File not found: {}", names::tool_path(&name))),
        Err(e) => return error(format!("the files are unavailable: {e}")),
    };
    // An office document or a PDF is read as the text eve_documents makes of it.
    let document = match eve_documents::text_of(&file.media_type, &name, &file.data) {
        Some(Ok(text)) => Some(text),
        Some(Err(e)) => return error(format!("{} cannot be read: {e}", names::tool_path(&name))),
        None => None,
    };
    let Ok(text) = document
        .as_deref()
        .map_or(std::str::from_utf8(&file.data), Ok)
    else {
        let content = format!(
            "{} is a binary file ({}, {} bytes): it cannot be shown as text.",
            names::tool_path(&name),
            file.media_type,
            file.data.len()
        );
        return (
            json!({ "content": content, "path": names::tool_path(&name), "totalLines": 0, "truncated": false,
                        "file": { "mediaType": file.media_type, "size": file.data.len() } }),
            false,
        );
    };
    let all = lines(text);
    let start = offset.max(1) - 1;
    let limit = limit.unwrap_or(DEFAULT_READ_LINES).max(1);
    let mut content = String::new();
    let mut next = start;
    for (i, line) in all.iter().enumerate().skip(start).take(limit) {
        let row = format!("{}: {line}\n", i + 1);
        if !content.is_empty() && content.len() + row.len() > MAX_READ_CHARS {
            break;
        }
        content.push_str(&row);
        next = i + 1;
    }
    let truncated = next < all.len();
    let mut out = json!({ "content": content, "path": names::tool_path(&name), "totalLines": all.len(), "truncated": truncated });
    if truncated {
        out["nextOffset"] = json!(next + 1);
    }
    (out, false)
}

/// A written file's type from its name (text kinds; anything else is plain text).
pub fn media_type_for(name: &str) -> &'static str {
    let ext = name
        .rsplit_once('.')
        .map(|(_, e)| e.to_ascii_lowercase())
        .unwrap_or_default();
    match ext.as_str() {
        "csv" => "text/csv",
        "tsv" => "text/tab-separated-values",
        "md" | "markdown" => "text/markdown",
        "json" => "application/json",
        "xml" => "application/xml",
        "yaml" | "yml" => "application/yaml",
        "html" | "htm" => "text/html",
        _ => "text/plain",
    }
}

fn write_file<S: Sql>(fs: &FileScope<'_, S>, path: &str, content: &str) -> Outcome {
    let name = match names::from_tool_path(path) {
        Ok(n) => n,
        Err(e) => return error(e),
    };
    if content.len() as u64 > fs.file_max {
        return error(format!(
            "{name} would be {} bytes: files are at most {} bytes",
            content.len(),
            fs.file_max
        ));
    }
    let id = (fs.new_id)();
    let new = fs.new_file(&id, &name, media_type_for(&name), content);
    match files::write_temp(fs.db, new) {
        Ok(existed) => (
            json!({ "existed": existed, "path": names::tool_path(&name), "size": content.len() }),
            false,
        ),
        Err(WriteRefused::Protected(source)) => error(format!(
            "{} is {}: it cannot be overwritten. Write your result to a new file instead.",
            names::tool_path(&name),
            if source == FileSource::UserUpload {
                "a file the user uploaded"
            } else {
                "a file the user marked final"
            }
        )),
        Err(WriteRefused::StorageFull) => {
            error("the user's storage is full: the file was not written")
        }
        Err(WriteRefused::Database(e)) => error(format!("the file was not written: {e}")),
    }
}

fn glob_files<S: Sql>(fs: &FileScope<'_, S>, pattern: &str, limit: usize) -> Outcome {
    let glob = match NameGlob::new(pattern) {
        Ok(g) => g,
        Err(e) => return error(e),
    };
    let all = match files::names(fs.db, fs.principal, fs.scope) {
        Ok(n) => n,
        Err(e) => return error(format!("the files are unavailable: {e}")),
    };
    let found: Vec<String> = all
        .iter()
        .filter(|(n, _, _)| glob.matches(n))
        .map(|(n, _, _)| names::tool_path(n))
        .collect();
    let truncated = found.len() > limit;
    let shown = &found[..found.len().min(limit)];
    (
        json!({ "content": shown.join("\n"), "count": shown.len(), "path": "/workspace", "truncated": truncated }),
        false,
    )
}

/// What one grep call asks for.
struct GrepQuery {
    regex: regex::Regex,
    /// Matches shown per file.
    limit: usize,
    /// Lines shown before and after each match.
    context: usize,
    /// The one file searched (`path` naming a file).
    only: Option<String>,
    filter: Option<NameGlob>,
}

impl GrepQuery {
    fn parse(pattern: &str, input: &Value) -> Result<GrepQuery, String> {
        let flag = |k: &str| input.get(k).and_then(Value::as_bool).unwrap_or(false);
        let num = |k: &str| input.get(k).and_then(Value::as_u64);
        let filter = match input.get("glob").and_then(Value::as_str) {
            Some(g) => Some(NameGlob::new(g)?),
            None => None,
        };
        Ok(GrepQuery {
            regex: patterns::line_regex(pattern, flag("literal"), flag("ignoreCase"))?,
            limit: num("limit").unwrap_or(100).clamp(1, 1000) as usize,
            context: num("context").unwrap_or(0).min(20) as usize,
            only: input
                .get("path")
                .and_then(Value::as_str)
                .and_then(|p| names::from_tool_path(p).ok()),
            filter,
        })
    }

    fn wants(&self, name: &str) -> bool {
        self.only.as_deref().is_none_or(|o| o == name)
            && self.filter.as_ref().is_none_or(|g| g.matches(name))
    }

    /// Appends one file's matches (with their context) to `out`, which never grows past
    /// [`MAX_GREP_CHARS`]; how many were shown, and whether some were not (more than
    /// `limit`, or `out` full).
    fn search(&self, name: &str, text: &str, out: &mut String) -> (usize, bool) {
        let all: Vec<&str> = text.lines().collect();
        let hits: Vec<usize> = (0..all.len())
            .filter(|i| self.regex.is_match(all[*i]))
            .collect();
        for (shown, &i) in hits.iter().take(self.limit).enumerate() {
            let last = (i + self.context).min(all.len() - 1);
            for (j, line) in all
                .iter()
                .enumerate()
                .take(last + 1)
                .skip(i.saturating_sub(self.context))
            {
                let line: String = line.chars().take(MAX_LINE_CHARS).collect();
                let row = format!("{}:{}: {line}\n", names::tool_path(name), j + 1);
                if out.len() + row.len() > MAX_GREP_CHARS {
                    return (shown, true);
                }
                out.push_str(&row);
            }
        }
        (hits.len().min(self.limit), hits.len() > self.limit)
    }
}

/// A file's first [`MAX_GREP_BYTES`] as text; `None` for a binary file. The cut may fall
/// inside a character: the whole characters before it are still searched.
fn text_head(data: &[u8]) -> Option<&str> {
    match std::str::from_utf8(data) {
        Ok(text) => Some(text),
        Err(e) if e.error_len().is_none() => std::str::from_utf8(&data[..e.valid_up_to()]).ok(),
        Err(_) => None,
    }
}

/// Searches the wanted files one at a time, by name, until [`MAX_GREP_TOTAL_BYTES`] are read
/// or the answer is full; what was left out makes `truncated` true.
fn grep<S: Sql>(fs: &FileScope<'_, S>, pattern: &str, input: &Value) -> Outcome {
    let query = match GrepQuery::parse(pattern, input) {
        Ok(q) => q,
        Err(e) => return error(e),
    };
    let listed = match files::names(fs.db, fs.principal, fs.scope) {
        Ok(l) => l,
        Err(e) => return error(format!("the files are unavailable: {e}")),
    };
    let (mut content, mut count, mut truncated) = (String::new(), 0usize, false);
    let mut budget = MAX_GREP_TOTAL_BYTES;
    for (name, size, _) in listed.iter().filter(|(n, ..)| query.wants(n)) {
        let take = (*size as usize).min(MAX_GREP_BYTES);
        if take > budget || content.len() >= MAX_GREP_CHARS {
            truncated = true;
            break;
        }
        budget -= take;
        let data = match files::head(fs.db, fs.principal, fs.scope, name, take) {
            Ok(Some(d)) => d,
            Ok(None) => continue,
            Err(e) => return error(format!("the files are unavailable: {e}")),
        };
        let Some(text) = text_head(&data) else {
            continue;
        };
        let (n, more) = query.search(name, text, &mut content);
        count += n;
        truncated |= more;
    }
    (
        json!({ "content": content, "matchCount": count, "path": "/workspace", "truncated": truncated }),
        false,
    )
}

/// Keeps a large tool output as a temp file of the scope, named after its call; the name
/// the model is told (it reads the rest with `read_file`).
pub fn keep_output<S: Sql>(
    fs: &FileScope<'_, S>,
    call_id: &str,
    output: &str,
) -> Result<String, String> {
    let safe: String = call_id
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || "-_".contains(*c))
        .take(64)
        .collect();
    let name = format!("tool-output-{safe}.json");
    let id = (fs.new_id)();
    // Within the principal's storage like any file the agent writes: past it the output is not
    // kept, and the model reads the truncated part it was shown.
    let new = fs.new_file(&id, &name, "application/json", output);
    match files::write_temp(fs.db, new) {
        Ok(_) => Ok(names::tool_path(&name)),
        Err(WriteRefused::Database(e)) => Err(e),
        Err(other) => Err(format!("{other:?}")),
    }
}
