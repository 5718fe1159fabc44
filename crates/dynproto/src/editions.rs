//! Protobuf Editions (`edition = "2023";`) for `.proto` files, which protox does not parse yet: a
//! file is lowered to proto2 or proto3 text with the same wire format, then compiled as any other.
//!
//! Edition 2023 differs from proto2 and proto3 in its syntax line, in fields without a label (their
//! presence comes from `features.field_presence`) and in `features.*` options. A file whose
//! presence is `IMPLICIT` (grpc-go's examples) becomes proto3, its `EXPLICIT` fields `optional`;
//! any other becomes proto2, every label-less field `optional` (`required` for `LEGACY_REQUIRED`,
//! and `optional` too for an `IMPLICIT` message or field, which proto2 cannot say: the wire is the
//! same, only a zero a client sets is then sent). The `features.*` options are blanked, keeping
//! lines and most columns. Repeated scalars are packed unless `repeated_field_encoding =
//! EXPANDED`, which [`Lowered::apply`] writes into the compiled descriptors; `message_encoding =
//! DELIMITED` (group encoding) is refused.

use std::collections::HashMap;

/// Messages inside messages, at most (the lowering recurses once per level).
const MAX_NESTING: usize = 100;

/// A file lowered to proto2 or proto3, and what its features say the compiled descriptors must carry.
#[derive(Debug, Default)]
pub struct Lowered {
    pub source: String,
    /// `.package.Message` and field name of every repeated field, and whether it is packed (when
    /// its type is a scalar or an enum).
    packed: HashMap<(String, String), bool>,
}

/// Whether `source` is an Editions file: its first statement is `edition = "…";`.
pub fn declares_edition(source: &str) -> bool {
    tokens(source).first().is_some_and(|t| t.text == "edition")
}

/// Lowers an edition 2023 file (see the module's comment); Err is `line:column: why`.
pub(crate) fn lower(source: &str) -> Result<Lowered, String> {
    let tokens = tokens(source);
    let mut l = Lowering {
        source,
        tokens: &tokens,
        at: 0,
        edits: Vec::new(),
        package: String::new(),
        proto3: false,
        out: Lowered::default(),
    };
    l.file()?;
    let text = apply_edits(source, l.edits)?;
    Ok(Lowered { source: text, packed: l.out.packed })
}

/// `line:column` of byte `offset` (or of the character it falls in) in `source`.
fn place(source: &str, offset: usize) -> String {
    let before = &source[..source.floor_char_boundary(offset.min(source.len()))];
    let line = before.matches('\n').count() + 1;
    let column = before.len() - before.rfind('\n').map_or(0, |n| n + 1) + 1;
    format!("{line}:{column}")
}

/// `source` with each `(start, end, replacement)` made, front to back. Edits that overlap, or an
/// end inside a character, are an error: the lowering went wrong, and its text would be garbage.
fn apply_edits(source: &str, mut edits: Vec<(usize, usize, String)>) -> Result<String, String> {
    // An insertion (start == end) goes before a replacement starting at the same place.
    edits.sort_by_key(|e| (e.0, e.1));
    let mut text = String::with_capacity(source.len());
    let mut done = 0;
    for (start, end, replacement) in edits {
        let kept = source.get(done..start).filter(|_| start <= end);
        let Some(kept) = kept.filter(|_| source.is_char_boundary(end)) else {
            return Err(format!("{}: cannot lower this statement (its edits overlap)", place(source, start)));
        };
        text.push_str(kept);
        text.push_str(&replacement);
        done = end;
    }
    text.push_str(&source[done..]);
    Ok(text)
}

impl Lowered {
    /// Writes the packed encoding of edition 2023 into the compiled descriptor of the file.
    pub fn apply(&self, file: &mut prost_reflect::prost_types::FileDescriptorProto) {
        let package = file.package.clone().map(|p| format!(".{p}")).unwrap_or_default();
        for message in &mut file.message_type {
            self.apply_to(&package, message);
        }
    }

    fn apply_to(&self, scope: &str, message: &mut prost_reflect::prost_types::DescriptorProto) {
        use prost_reflect::prost_types::field_descriptor_proto::Type;
        let name = format!("{scope}.{}", message.name());
        for field in &mut message.field {
            let Some(packed) = self.packed.get(&(name.clone(), field.name().to_string())) else { continue };
            let packable = !matches!(field.r#type(), Type::Message | Type::Group | Type::String | Type::Bytes);
            if packable && field.label() == prost_reflect::prost_types::field_descriptor_proto::Label::Repeated {
                field.options.get_or_insert_with(Default::default).packed = Some(*packed);
            }
        }
        for nested in &mut message.nested_type {
            self.apply_to(&name, nested);
        }
    }
}

#[derive(Debug)]
struct Token {
    text: String,
    start: usize,
    end: usize,
}

/// The file's tokens, comments and whitespace left out: identifiers with their dots
/// (`features.field_presence`, `.pkg.Type`), numbers, strings (quotes kept) and single symbols.
fn tokens(source: &str) -> Vec<Token> {
    let bytes = source.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        let start = i;
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        if bytes[i..].starts_with(b"//") {
            i = source[i..].find('\n').map_or(bytes.len(), |n| i + n);
            continue;
        }
        if bytes[i..].starts_with(b"/*") {
            i = source[i + 2..].find("*/").map_or(bytes.len(), |n| i + 2 + n + 2);
            continue;
        }
        if c == b'"' || c == b'\'' {
            i += 1;
            while i < bytes.len() && bytes[i] != c {
                i += if bytes[i] == b'\\' { 2 } else { 1 };
            }
            i = (i + 1).min(bytes.len());
        } else if c.is_ascii_alphabetic()
            || c == b'_'
            || (c == b'.' && bytes.get(i + 1).is_some_and(u8::is_ascii_alphabetic))
        {
            i += 1;
            while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_' || bytes[i] == b'.') {
                i += 1;
            }
        } else if c.is_ascii_digit() {
            while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'.') {
                i += 1;
            }
        } else {
            i += source[i..].chars().next().map_or(1, char::len_utf8);
        }
        out.push(Token { text: source[start..i].to_string(), start, end: i });
    }
    out
}

/// What a scope's `features.*` options say that the lowering keeps (None: inherited).
#[derive(Debug, Clone, Copy, Default)]
struct Features {
    /// `repeated_field_encoding = EXPANDED` (false: PACKED).
    expanded: Option<bool>,
    /// `field_presence = IMPLICIT` (false: EXPLICIT).
    implicit: Option<bool>,
}

struct Lowering<'a> {
    source: &'a str,
    tokens: &'a [Token],
    at: usize,
    /// (start, end, replacement) in `source`.
    edits: Vec<(usize, usize, String)>,
    package: String,
    /// The file became proto3 (its presence is IMPLICIT), not proto2.
    proto3: bool,
    out: Lowered,
}

impl Lowering<'_> {
    fn peek(&self) -> &str {
        self.tokens.get(self.at).map_or("", |t| t.text.as_str())
    }

    fn next(&mut self) -> Result<&Token, String> {
        let token = self.tokens.get(self.at).ok_or_else(|| "the file ends in the middle of a statement".to_string())?;
        self.at += 1;
        Ok(token)
    }

    fn fail<T>(&self, at: usize, why: &str) -> Result<T, String> {
        let offset = self.tokens.get(at).map_or(self.source.len(), |t| t.start);
        Err(format!("{}: {why}", place(self.source, offset)))
    }

    /// Blanks tokens `from..to` (spaces, newlines kept).
    fn blank(&mut self, from: usize, to: usize) {
        let (start, end) = (self.tokens[from].start, self.tokens[to - 1].end);
        let spaces = self.source[start..end].chars().map(|c| if c == '\n' { '\n' } else { ' ' }).collect();
        self.edits.push((start, end, spaces));
    }

    /// Moves past the statement that starts here: to its `;`, or past its `{ … }` block.
    fn skip_statement(&mut self) -> Result<(), String> {
        let mut depth = 0usize;
        loop {
            let text = self.next()?.text.clone();
            match text.as_str() {
                "{" => depth += 1,
                "}" if depth <= 1 => return Ok(()),
                "}" => depth -= 1,
                ";" if depth == 0 => return Ok(()),
                _ => {}
            }
        }
    }

    fn file(&mut self) -> Result<(), String> {
        let first = self.at;
        let head: Vec<String> =
            (0..4).map(|i| self.tokens.get(first + i).map_or(String::new(), |t| t.text.clone())).collect();
        match (head[0].as_str(), head[1].as_str(), head[2].trim_matches(['"', '\'']), head[3].as_str()) {
            ("edition", "=", "2023", ";") => {}
            ("edition", "=", edition, _) if edition != "2023" => {
                return self.fail(first + 2, &format!("edition {} is not supported (edition 2023 is)", head[2]))
            }
            _ => return self.fail(first, "expected `edition = \"2023\";`"),
        }
        self.at += 4;
        let features = self.scope_features(self.at)?;
        self.proto3 = features.implicit == Some(true);
        let syntax = if self.proto3 { "syntax = \"proto3\";" } else { "syntax = \"proto2\";" };
        let (start, end) = (self.tokens[first].start, self.tokens[first + 3].end);
        // The newlines inside `edition … ;` stay, so that every later line keeps its number.
        let newlines = "\n".repeat(self.source[start..end].matches('\n').count());
        self.edits.push((start, end, format!("{syntax}{newlines}")));
        while self.at < self.tokens.len() {
            match self.peek() {
                "option" => self.option()?,
                "package" => {
                    self.at += 1;
                    self.package = format!(".{}", self.next()?.text);
                    self.skip_statement()?;
                }
                "message" => {
                    let package = self.package.clone();
                    self.message(&package, &[features])?
                }
                "enum" | "service" => self.block_without_fields()?,
                "extend" => self.extend(&[features])?,
                t if t.starts_with("features.") => return self.bare_feature(self.at),
                _ => self.skip_statement()?,
            }
        }
        Ok(())
    }

    /// The features of the scope whose statements start at token `from` (its options may come
    /// after its fields).
    fn scope_features(&self, from: usize) -> Result<Features, String> {
        let mut features = Features::default();
        let mut depth = 0usize;
        for (i, t) in self.tokens.iter().enumerate().skip(from) {
            match t.text.as_str() {
                "{" => depth += 1,
                "}" if depth == 0 => break,
                "}" => depth -= 1,
                "option" if depth == 0 => {
                    let name = self.tokens.get(i + 1).map_or("", |t| t.text.as_str());
                    let value = self.tokens.get(i + 3).map_or("", |t| t.text.as_str());
                    self.feature(i, name, value, &mut features)?;
                }
                _ => {}
            }
        }
        Ok(features)
    }

    /// `option …;`: a `features.*` one is blanked (its scope read it already).
    fn option(&mut self) -> Result<(), String> {
        let start = self.at;
        self.at += 1;
        let is_feature = self.peek().starts_with("features.");
        self.skip_statement()?;
        if is_feature {
            self.blank(start, self.at);
        }
        Ok(())
    }

    fn feature(&self, at: usize, name: &str, value: &str, features: &mut Features) -> Result<(), String> {
        match (name, value) {
            ("features.repeated_field_encoding", v) => features.expanded = Some(v == "EXPANDED"),
            ("features.field_presence", v) => features.implicit = Some(v == "IMPLICIT"),
            ("features.message_encoding", "DELIMITED") => {
                return self.fail(at, "features.message_encoding = DELIMITED (group encoding) is not supported")
            }
            _ => {}
        }
        Ok(())
    }

    /// An enum or a service: no fields to lower, only `features.*` options to blank.
    fn block_without_fields(&mut self) -> Result<(), String> {
        let mut depth = 0usize;
        loop {
            let i = self.at;
            let text = self.next()?.text.clone();
            match text.as_str() {
                "{" => depth += 1,
                "}" if depth <= 1 => return Ok(()),
                "}" => depth -= 1,
                t if t.starts_with("features.") => {
                    self.features_option_at(i)?;
                }
                _ => {}
            }
        }
    }

    /// Blanks the `features.x = V` at token `i`: a statement (`option features.x = V;`) or one
    /// entry of a `[…]` list with its comma; true if it was one. A `features.x` that is not
    /// assigned is left alone (a type of a package `features`, a custom option's name); one
    /// assigned without `option` or brackets is an error.
    fn features_option_at(&mut self, i: usize) -> Result<bool, String> {
        let mut end = i;
        while end < self.tokens.len() && ![";", ",", "]"].contains(&self.tokens[end].text.as_str()) {
            end += 1;
        }
        let assigned = self.tokens.get(i + 1).is_some_and(|t| t.text == "=");
        let previous = self.tokens[i.saturating_sub(1)].text.as_str();
        let (from, to) = match (previous, self.tokens.get(end).map(|t| t.text.as_str())) {
            ("option", _) => (i - 1, end + 1),
            (_, _) if !assigned => return Ok(false),
            ("[" | ",", Some(",")) => (i, end + 1),
            (",", Some("]")) => (i - 1, end),
            ("[", Some("]")) => (i - 1, end + 1), // the only entry: the brackets go too
            ("[" | ",", _) => return self.fail(i - 1, "the option list is not closed with `]`"),
            _ => return self.bare_feature(i),
        };
        self.at = self.at.max(to.min(self.tokens.len()));
        self.blank(from, to.min(self.tokens.len()));
        Ok(true)
    }

    /// `features.x = V;` without `option`: not a protobuf statement.
    fn bare_feature<T>(&self, i: usize) -> Result<T, String> {
        let name = &self.tokens[i].text;
        self.fail(i, &format!("`{name} = …;` is not a statement: an option is written `option {name} = …;`"))
    }

    fn message(&mut self, scope: &str, outer: &[Features]) -> Result<(), String> {
        self.at += 1; // message
        let name = format!("{scope}.{}", self.next()?.text);
        if self.next()?.text != "{" {
            return self.fail(self.at - 1, "expected `{` after the message's name");
        }
        let features = self.scope_features(self.at)?;
        let scopes: Vec<Features> = outer.iter().copied().chain([features]).collect();
        if scopes.len() > MAX_NESTING {
            return self.fail(self.at, "messages nested too deeply");
        }
        loop {
            match self.peek() {
                "}" => {
                    self.at += 1;
                    return Ok(());
                }
                "" => return self.fail(self.at, "the message is not closed"),
                ";" => self.at += 1,
                "option" => self.option()?,
                "message" => self.message(&name, &scopes)?,
                "enum" => self.block_without_fields()?,
                "extend" => self.extend(&scopes)?,
                "oneof" => self.oneof()?,
                "reserved" | "extensions" => self.skip_statement()?,
                "group" => return self.fail(self.at, "groups are not part of edition 2023"),
                _ => self.field(&name, &scopes, true)?,
            }
        }
    }

    fn extend(&mut self, scopes: &[Features]) -> Result<(), String> {
        self.at += 1; // extend
        self.next()?; // the extended message
        if self.next()?.text != "{" {
            return self.fail(self.at - 1, "expected `{` after the extended message");
        }
        while self.peek() != "}" {
            if self.peek().is_empty() {
                return self.fail(self.at, "the extend block is not closed");
            }
            if self.peek() == "option" {
                return self.fail(self.at, "an extend block holds fields only");
            }
            self.field("", scopes, true)?;
        }
        self.at += 1;
        Ok(())
    }

    fn oneof(&mut self) -> Result<(), String> {
        self.at += 1; // oneof
        self.next()?; // its name
        if self.next()?.text != "{" {
            return self.fail(self.at - 1, "expected `{` after the oneof's name");
        }
        loop {
            match self.peek() {
                "}" => {
                    self.at += 1;
                    return Ok(());
                }
                "" => return self.fail(self.at, "the oneof is not closed"),
                "option" => self.option()?,
                ";" => self.at += 1,
                _ => self.field("", &[], false)?,
            }
        }
    }

    /// One field; `may_label` says whether a label-less one may get a label (not in a oneof).
    fn field(&mut self, message: &str, scopes: &[Features], may_label: bool) -> Result<(), String> {
        let start = self.at;
        let repeated = self.peek() == "repeated";
        let bare = may_label && !["repeated", "optional", "required", "map"].contains(&self.peek());
        let mut name = String::new();
        let mut own = Features::default();
        let mut required = false;
        let mut brackets = 0usize;
        loop {
            let i = self.at;
            let text = self.next()?.text.clone();
            match text.as_str() {
                "=" if name.is_empty() => name = self.tokens[i - 1].text.clone(),
                ";" if brackets == 0 => break,
                "[" => brackets += 1,
                "]" => brackets = brackets.saturating_sub(1),
                "{" | "}" if brackets == 0 => return self.fail(i, "expected a field (type name = number;)"),
                t if t.starts_with("features.") => {
                    if !self.features_option_at(i)? {
                        continue;
                    }
                    let value = self.tokens.get(i + 2).map_or("", |t| t.text.as_str()).to_string();
                    required |= t == "features.field_presence" && value == "LEGACY_REQUIRED";
                    self.feature(i, t, &value, &mut own)?;
                    if self.tokens[self.at - 1].text == "]" {
                        brackets = brackets.saturating_sub(1); // the list held only this entry
                    }
                }
                _ => {}
            }
        }
        if name.is_empty() {
            return self.fail(start, "expected a field (type name = number;)");
        }
        let inherited = |pick: fn(&Features) -> Option<bool>| [own].iter().chain(scopes.iter().rev()).find_map(pick);
        let label = match (self.proto3, required, inherited(|f| f.implicit).unwrap_or(false)) {
            (false, true, _) => Some("required "),
            (false, false, _) | (true, _, false) => Some("optional "),
            (true, _, true) => None,
        };
        if let Some(label) = label.filter(|_| bare) {
            let at = self.tokens[start].start;
            self.edits.push((at, at, label.into()));
        }
        if repeated && !message.is_empty() {
            let expanded = inherited(|f| f.expanded).unwrap_or(false);
            self.out.packed.insert((message.to_string(), name), !expanded);
        }
        Ok(())
    }
}

pub mod descriptors;
#[cfg(test)]
mod tests;
