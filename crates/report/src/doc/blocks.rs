//! The pieces a report is made of — headings, paragraphs, lists, tables, folded text — as plain
//! text that the Markdown and HTML renderers write each in their own way.

/// A piece of the report. All text is plain (unescaped) text from the results.
#[derive(Debug, Clone, PartialEq)]
pub enum Block {
    Title(String),
    Heading(String),
    Subheading(String),
    /// A warning that must not be missed (interrupted or partial run).
    Banner(String),
    Paragraph(String),
    List(Vec<String>),
    Table(Table),
    /// The charts of one experiment (by id): HTML draws them, Markdown has none.
    Charts(String),
    /// The answer's charts (HTML only): each answered question's cells side by side.
    AnswerCharts,
    /// A list folded away (HTML `<details>`; Markdown: a section of its own, late in the report).
    FoldedList {
        summary: String,
        items: Vec<String>,
    },
    /// Long verbatim text, folded: the suite file.
    Details {
        summary: String,
        text: String,
        lang: String,
    },
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct Table {
    pub columns: Vec<Column>,
    pub rows: Vec<Row>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Column {
    pub title: String,
    /// Numbers are right-aligned.
    pub numeric: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub cells: Vec<String>,
    pub mark: RowMark,
}

/// How a row stands out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RowMark {
    Normal,
    Noisy,
    Failed,
}

impl Table {
    pub fn new(columns: &[(&str, bool)]) -> Table {
        Table {
            columns: columns.iter().map(|(t, numeric)| Column { title: t.to_string(), numeric: *numeric }).collect(),
            rows: vec![],
        }
    }

    pub fn push(&mut self, cells: Vec<String>, mark: RowMark) {
        debug_assert_eq!(cells.len(), self.columns.len());
        self.rows.push(Row { cells, mark });
    }
}
