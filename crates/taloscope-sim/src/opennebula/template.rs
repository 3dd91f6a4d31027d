//! OpenNebula templates as the sim keeps them: attributes in order, single (`CPU = "2"`) or
//! vector (`CONTEXT = [ NETWORK = "YES" ]`), parsed from `KEY = value` text or `<TEMPLATE>` XML,
//! merged the way `extra_template` is (a named attribute replaces the whole attribute).
use super::xml;

/// One template attribute's value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Value {
    Single(String),
    Vector(Vec<(String, String)>),
}

/// A template: attributes in the order they were given; names are upper case.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Template {
    pub attrs: Vec<(String, Value)>,
}

impl Template {
    /// Parses OpenNebula template text, or XML when it starts with `<`.
    pub fn parse(text: &str) -> Result<Template, String> {
        let trimmed = text.trim();
        if trimmed.starts_with('<') {
            return from_xml(trimmed);
        }
        parse_attributes(trimmed)
    }

    /// A single attribute's value.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.attrs.iter().find_map(|(n, v)| match v {
            Value::Single(s) if n == name => Some(s.as_str()),
            _ => None,
        })
    }

    /// The pairs of the first vector attribute called `name`.
    pub fn vector(&self, name: &str) -> Option<&[(String, String)]> {
        self.attrs.iter().find_map(|(n, v)| match v {
            Value::Vector(pairs) if n == name => Some(pairs.as_slice()),
            _ => None,
        })
    }

    /// `name/key` in the first vector attribute called `name`.
    pub fn vector_get(&self, name: &str, key: &str) -> Option<&str> {
        self.vector(name)?
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// Replaces every attribute called `name` with `value`.
    pub fn set(&mut self, name: &str, value: Value) {
        self.attrs.retain(|(n, _)| n != name);
        self.attrs.push((name.to_string(), value));
    }

    /// `extra_template` semantics: each attribute named in `extra` replaces all of this
    /// template's attributes of that name.
    pub fn merge(&mut self, extra: &Template) {
        for (name, _) in &extra.attrs {
            self.attrs.retain(|(n, _)| n != name);
        }
        self.attrs.extend(extra.attrs.iter().cloned());
    }

    /// `<root>` with one element per attribute, values as CDATA like OpenNebula writes them.
    pub fn to_xml(&self, root: &str) -> String {
        let mut out = format!("<{root}>");
        for (name, value) in &self.attrs {
            match value {
                Value::Single(s) => out.push_str(&format!("<{name}>{}</{name}>", xml::cdata(s))),
                Value::Vector(pairs) => {
                    out.push_str(&format!("<{name}>"));
                    for (k, v) in pairs {
                        out.push_str(&format!("<{k}>{}</{k}>", xml::cdata(v)));
                    }
                    out.push_str(&format!("</{name}>"));
                }
            }
        }
        out.push_str(&format!("</{root}>"));
        out
    }
}

/// `<TEMPLATE>…</TEMPLATE>`, or bare attribute elements (pyone sends nested dicts that way).
fn from_xml(text: &str) -> Result<Template, String> {
    let root = xml::read_document(text)
        .or_else(|_| xml::read_document(&format!("<TEMPLATE>{text}</TEMPLATE>")))?;
    let elements = if root.name == "TEMPLATE" {
        root.children
    } else {
        vec![root]
    };
    let mut template = Template::default();
    for e in elements {
        let value = if e.children.is_empty() {
            Value::Single(e.text)
        } else {
            Value::Vector(
                e.children
                    .into_iter()
                    .map(|c| (c.name.to_uppercase(), c.text))
                    .collect(),
            )
        };
        template.attrs.push((e.name.to_uppercase(), value));
    }
    Ok(template)
}

/// A tiny lexer over `KEY = value`, `KEY = "quoted \" value"`, `KEY = [ A = x, B = "y" ]`.
struct Lexer<'a> {
    chars: std::iter::Peekable<std::str::Chars<'a>>,
    line: usize,
}

impl Lexer<'_> {
    fn skip_blank(&mut self) {
        while let Some(&c) = self.chars.peek() {
            if c == '#' {
                while self.chars.peek().is_some_and(|&c| c != '\n') {
                    self.chars.next();
                }
            } else if c.is_whitespace() {
                if c == '\n' {
                    self.line += 1;
                }
                self.chars.next();
            } else {
                break;
            }
        }
    }

    fn name(&mut self) -> Result<String, String> {
        self.skip_blank();
        let mut name = String::new();
        while let Some(&c) = self.chars.peek() {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                name.push(c);
                self.chars.next();
            } else {
                break;
            }
        }
        if name.is_empty() {
            return Err(format!("line {}: expected an attribute name", self.line));
        }
        Ok(name.to_uppercase())
    }

    fn expect(&mut self, want: char) -> Result<(), String> {
        self.skip_blank();
        match self.chars.next() {
            Some(c) if c == want => Ok(()),
            other => Err(format!(
                "line {}: expected {want:?}, found {other:?}",
                self.line
            )),
        }
    }

    /// A value ends at a newline (top level) or at `,` / `]` (inside a vector).
    fn value(&mut self, in_vector: bool) -> Result<String, String> {
        while self.chars.peek().is_some_and(|&c| c == ' ' || c == '\t') {
            self.chars.next();
        }
        if self.chars.peek() == Some(&'"') {
            self.chars.next();
            let mut out = String::new();
            loop {
                match self.chars.next() {
                    None => return Err(format!("line {}: unterminated quoted value", self.line)),
                    Some('"') => return Ok(out),
                    Some('\\') => match self.chars.next() {
                        Some(c) => out.push(c),
                        None => return Err(format!("line {}: dangling backslash", self.line)),
                    },
                    Some(c) => {
                        if c == '\n' {
                            self.line += 1;
                        }
                        out.push(c);
                    }
                }
            }
        }
        let mut out = String::new();
        while let Some(&c) = self.chars.peek() {
            if c == '\n' || (in_vector && (c == ',' || c == ']')) {
                break;
            }
            out.push(c);
            self.chars.next();
        }
        Ok(out.trim().to_string())
    }
}

fn parse_attributes(text: &str) -> Result<Template, String> {
    let mut lx = Lexer {
        chars: text.chars().peekable(),
        line: 1,
    };
    let mut template = Template::default();
    loop {
        lx.skip_blank();
        if lx.chars.peek().is_none() {
            return Ok(template);
        }
        let name = lx.name()?;
        lx.expect('=')?;
        lx.skip_blank();
        if lx.chars.peek() == Some(&'[') {
            lx.chars.next();
            let mut pairs = Vec::new();
            loop {
                lx.skip_blank();
                if lx.chars.peek() == Some(&']') {
                    lx.chars.next();
                    break;
                }
                let key = lx.name()?;
                lx.expect('=')?;
                lx.skip_blank();
                let value = lx.value(true)?;
                pairs.push((key, value));
                lx.skip_blank();
                match lx.chars.next() {
                    Some(',') => {}
                    Some(']') => break,
                    other => {
                        return Err(format!(
                            "line {}: expected ',' or ']' in {name}, found {other:?}",
                            lx.line
                        ));
                    }
                }
            }
            template.attrs.push((name, Value::Vector(pairs)));
        } else {
            let value = lx.value(false)?;
            template.attrs.push((name, Value::Single(value)));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_single_and_vector_attributes() {
        let t = Template::parse(
            "CPU = 2\nMEMORY=\"4096\"\n# comment\nCONTEXT = [ NETWORK = \"YES\", USER_DATA = \"a\\\"b\" ]\nNIC=[NETWORK_ID=0]",
        )
        .expect("parses");
        assert_eq!(t.get("CPU"), Some("2"));
        assert_eq!(t.get("MEMORY"), Some("4096"));
        assert_eq!(t.vector_get("CONTEXT", "USER_DATA"), Some("a\"b"));
        assert_eq!(t.vector_get("NIC", "NETWORK_ID"), Some("0"));
    }

    #[test]
    fn extra_template_replaces_whole_attributes() {
        let mut base = Template::parse("CPU=1\nCONTEXT=[NETWORK=YES,TOKEN=YES]").expect("base");
        let extra = Template::parse("CONTEXT=[USER_DATA=abc]").expect("extra");
        base.merge(&extra);
        assert_eq!(base.get("CPU"), Some("1"));
        assert_eq!(base.vector_get("CONTEXT", "USER_DATA"), Some("abc"));
        assert_eq!(base.vector_get("CONTEXT", "NETWORK"), None);
    }

    #[test]
    fn parses_xml_with_and_without_a_template_root() {
        let t = Template::parse("<TEMPLATE><CPU><![CDATA[3]]></CPU></TEMPLATE>").expect("xml");
        assert_eq!(t.get("CPU"), Some("3"));
        let t = Template::parse("<CONTEXT><USER_DATA><![CDATA[x&y]]></USER_DATA></CONTEXT>")
            .expect("bare");
        assert_eq!(t.vector_get("CONTEXT", "USER_DATA"), Some("x&y"));
        let back = Template::parse(&t.to_xml("TEMPLATE")).expect("round trip");
        assert_eq!(back, t);
    }

    #[test]
    fn refuses_broken_text() {
        assert!(Template::parse("CPU").is_err());
        assert!(Template::parse("A = \"open").is_err());
        assert!(Template::parse("A = [ B = 1 ").is_err());
    }
}
