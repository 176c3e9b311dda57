//! A table as read from a sheet or a CSV file: its header (the first non-empty row) and its
//! rows of typed cells, and how it is shown to the model as a Markdown table with a bounded
//! preview that says what was left out.

/// One cell's value, typed as the file stores it (a CSV cell that reads as a number is one).
#[derive(Debug, Clone, PartialEq)]
pub enum Cell {
    Empty,
    Int(i64),
    Float(f64),
    Bool(bool),
    Text(String),
}

impl Cell {
    /// The cell as shown in a preview (numbers as written, `TRUE` / `FALSE` as Excel does).
    pub fn display(&self) -> String {
        match self {
            Cell::Empty => String::new(),
            Cell::Int(i) => i.to_string(),
            Cell::Float(f) => f.to_string(),
            Cell::Bool(b) => if *b { "TRUE" } else { "FALSE" }.into(),
            Cell::Text(t) => t.clone(),
        }
    }
}

/// A table: the header's texts and the rows under it, every row as wide as the widest.
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    /// The sheet's name, or the CSV file's name.
    pub name: String,
    pub headers: Vec<String>,
    pub rows: Vec<Vec<Cell>>,
}

/// How much of one table a preview shows.
#[derive(Debug, Clone, Copy)]
pub struct Bounds {
    pub rows: usize,
    pub columns: usize,
    /// The longest cell text shown (longer ones are cut with `…`).
    pub cell_chars: usize,
}

/// A sheet's preview in `read_file`: enough rows to see its shape and check a few values.
pub const PREVIEW: Bounds = Bounds {
    rows: 100,
    columns: 30,
    cell_chars: 200,
};

impl Table {
    /// The table in `rows`: the first row with a non-empty cell is the header; empty rows
    /// before it are dropped, and every row is padded to the widest.
    pub fn from_rows(name: &str, rows: Vec<Vec<Cell>>) -> Table {
        let width = rows.iter().map(Vec::len).max().unwrap_or(0);
        let mut rows = rows
            .into_iter()
            .skip_while(|r| r.iter().all(|c| *c == Cell::Empty));
        let headers = rows
            .next()
            .map(|r| r.iter().map(Cell::display).collect::<Vec<_>>())
            .unwrap_or_default();
        let mut headers: Vec<String> = headers.into_iter().map(|h| h.trim().into()).collect();
        headers.resize(width, String::new());
        let rows = rows
            .map(|mut r| {
                r.resize(width, Cell::Empty);
                r
            })
            .collect();
        Table {
            name: name.into(),
            headers,
            rows,
        }
    }

    /// The table as Markdown under a `## <title>` heading: its size, the first rows and
    /// columns within `bounds`, and a line saying how many were left out.
    pub fn markdown(&self, title: &str, bounds: Bounds) -> String {
        let (rows, cols) = (self.rows.len(), self.headers.len());
        let mut out = format!("## {title} ({rows} rows × {cols} columns under its header)\n\n");
        if cols == 0 {
            out.push_str("(empty)\n");
            return out;
        }
        let shown = cols.min(bounds.columns);
        let line = |cells: Vec<String>| format!("| {} |\n", cells.join(" | "));
        let cut = |s: &str| cell_text(s, bounds.cell_chars);
        out.push_str(&line(
            self.headers[..shown].iter().map(|h| cut(h)).collect(),
        ));
        out.push_str(&line(vec!["---".into(); shown]));
        for row in self.rows.iter().take(bounds.rows) {
            out.push_str(&line(
                row[..shown].iter().map(|c| cut(&c.display())).collect(),
            ));
        }
        let (more_rows, more_cols) = (rows.saturating_sub(bounds.rows), cols - shown);
        if more_rows > 0 || more_cols > 0 {
            out.push_str(&format!(
                "\n({more_rows} more rows and {more_cols} more columns not shown here: query_table reads every row and column.)\n"
            ));
        }
        out
    }
}

/// A cell's text as one Markdown table cell: on one line, `|` escaped, at most `max`
/// characters.
fn cell_text(s: &str, max: usize) -> String {
    let one_line: String = s
        .chars()
        .map(|c| if c == '\n' || c == '\r' { ' ' } else { c })
        .collect();
    let mut out: String = one_line.chars().take(max).collect();
    if one_line.chars().count() > max {
        out.push('…');
    }
    out.replace('|', "\\|")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &str) -> Cell {
        Cell::Text(s.into())
    }

    #[test]
    fn the_first_non_empty_row_is_the_header_and_rows_are_padded() {
        let table = Table::from_rows(
            "s",
            vec![
                vec![Cell::Empty],
                vec![t(" Date "), t("Amount")],
                vec![t("2024-03-01"), Cell::Float(12.5), Cell::Int(7)],
            ],
        );
        assert_eq!(table.headers, ["Date", "Amount", ""]);
        assert_eq!(table.rows[0].len(), 3);
    }

    #[test]
    fn a_preview_shows_its_bounds_and_says_what_it_left_out() {
        let rows: Vec<Vec<Cell>> = std::iter::once(vec![t("a"), t("b|c"), t("d")])
            .chain((0..5).map(|i| vec![Cell::Int(i), t("x\ny"), Cell::Bool(true)]))
            .collect();
        let md = Table::from_rows("s", rows).markdown(
            "Sheet s",
            Bounds {
                rows: 2,
                columns: 2,
                cell_chars: 10,
            },
        );
        assert_eq!(
            md,
            "## Sheet s (5 rows × 3 columns under its header)\n\n| a | b\\|c |\n| --- | --- |\n| 0 | x y |\n| 1 | x y |\n\n(3 more rows and 1 more columns not shown here: query_table reads every row and column.)\n"
        );
    }

    #[test]
    fn long_cells_are_cut() {
        assert_eq!(cell_text("abcdef", 3), "abc…");
    }
}
