//! Glob patterns over flat file names (eve's `glob` and `grep`'s `glob` filter): `*` and `**`
//! any characters, `?` one, `{a,b}` alternatives; a leading `/workspace/`, `**/` or `./` is
//! dropped (files have no directories). And the small regular expressions `grep` takes.

/// Whether `name` matches `pattern`.
pub fn matches(pattern: &str, name: &str) -> bool {
    let mut p = pattern.trim();
    for prefix in ["/workspace/", "$HOME/", "./", "/"] {
        p = p.strip_prefix(prefix).unwrap_or(p);
    }
    while let Some(rest) = p.strip_prefix("**/") {
        p = rest;
    }
    expand(p)
        .iter()
        .any(|alt| wild(alt.as_bytes(), name.as_bytes()))
}

/// `{a,b}` alternatives expanded (the first group; nested groups recurse).
fn expand(p: &str) -> Vec<String> {
    let (Some(open), Some(close)) = (p.find('{'), p.find('}')) else {
        return vec![p.to_string()];
    };
    if close < open {
        return vec![p.to_string()];
    }
    let (head, alts, tail) = (&p[..open], &p[open + 1..close], &p[close + 1..]);
    alts.split(',')
        .flat_map(|a| expand(&format!("{head}{a}{tail}")))
        .collect()
}

fn wild(p: &[u8], s: &[u8]) -> bool {
    match p.first() {
        None => s.is_empty(),
        Some(b'*') => (0..=s.len()).any(|i| wild(&p[1..], &s[i..])),
        Some(b'?') => !s.is_empty() && wild(&p[1..], &s[1..]),
        Some(c) => s.first() == Some(c) && wild(&p[1..], &s[1..]),
    }
}

/// A small regular expression: literal characters, `.`, `^`, `$`, `*`, `+`, `?`, the classes
/// `\d \w \s`, `\` escapes and `a|b` alternatives (no groups). Matching is by bytes.
#[derive(Debug, Clone)]
pub struct Regex {
    alternatives: Vec<Vec<Atom>>,
    anchored: Vec<bool>,
    ends: Vec<bool>,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Class {
    Any,
    Byte(u8),
    Digit,
    Word,
    Space,
}

#[derive(Debug, Clone, Copy, PartialEq)]
struct Atom {
    class: Class,
    /// (min, max) repetitions: `*` (0, ∞), `+` (1, ∞), `?` (0, 1), none (1, 1).
    min: usize,
    max: usize,
}

impl Regex {
    /// Parses `pattern` (`literal`: every character stands for itself).
    pub fn new(pattern: &str, literal: bool, ignore_case: bool) -> Result<Regex, String> {
        let lower = |b: u8| {
            if ignore_case {
                b.to_ascii_lowercase()
            } else {
                b
            }
        };
        let mut re = Regex {
            alternatives: vec![],
            anchored: vec![],
            ends: vec![],
        };
        let alts: Vec<&str> = if literal {
            vec![pattern]
        } else {
            pattern.split('|').collect()
        };
        for alt in alts {
            let mut b = alt.as_bytes();
            let anchored = !literal && b.first() == Some(&b'^');
            if anchored {
                b = &b[1..];
            }
            let ends = !literal && b.last() == Some(&b'$') && !b.ends_with(b"\\$");
            if ends {
                b = &b[..b.len() - 1];
            }
            re.alternatives.push(atoms(b, literal, lower)?);
            re.anchored.push(anchored);
            re.ends.push(ends);
        }
        Ok(re)
    }

    /// Whether `line` contains a match.
    pub fn is_match(&self, line: &[u8], ignore_case: bool) -> bool {
        let line: Vec<u8> = if ignore_case {
            line.to_ascii_lowercase()
        } else {
            line.to_vec()
        };
        self.alternatives.iter().enumerate().any(|(i, atoms)| {
            let starts = if self.anchored[i] {
                0..=0
            } else {
                0..=line.len()
            };
            starts
                .into_iter()
                .any(|s| at(atoms, &line[s..], self.ends[i]))
        })
    }
}

fn atoms(b: &[u8], literal: bool, lower: impl Fn(u8) -> u8) -> Result<Vec<Atom>, String> {
    let mut out: Vec<Atom> = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        let class = if literal {
            Class::Byte(lower(c))
        } else {
            match c {
                b'.' => Class::Any,
                b'*' | b'+' | b'?' => {
                    let last = out.last_mut().ok_or("a repetition needs something before it")?;
                    (last.min, last.max) = match c {
                        b'*' => (0, usize::MAX),
                        b'+' => (1, usize::MAX),
                        _ => (0, 1),
                    };
                    i += 1;
                    continue;
                }
                b'\\' => {
                    i += 1;
                    match b.get(i).ok_or("a pattern cannot end with \\")? {
                        b'd' => Class::Digit,
                        b'w' => Class::Word,
                        b's' => Class::Space,
                        other => Class::Byte(lower(*other)),
                    }
                }
                b'(' | b')' | b'[' | b']' => {
                    return Err("groups and [classes] are not supported: use literal text, . * + ? ^ $ | and \\d \\w \\s".into())
                }
                _ => Class::Byte(lower(c)),
            }
        };
        out.push(Atom {
            class,
            min: 1,
            max: 1,
        });
        i += 1;
    }
    Ok(out)
}

fn one(class: Class, b: u8) -> bool {
    match class {
        Class::Any => true,
        Class::Byte(x) => x == b,
        Class::Digit => b.is_ascii_digit(),
        Class::Word => b.is_ascii_alphanumeric() || b == b'_',
        Class::Space => b.is_ascii_whitespace(),
    }
}

/// Whether `atoms` match at the start of `s` (to its end when `ends`).
fn at(atoms: &[Atom], s: &[u8], ends: bool) -> bool {
    let Some((a, rest)) = atoms.split_first() else {
        return !ends || s.is_empty();
    };
    let most = s
        .iter()
        .take(a.max)
        .take_while(|b| one(a.class, **b))
        .count();
    (a.min..=most).rev().any(|n| at(rest, &s[n..], ends))
}
