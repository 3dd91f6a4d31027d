//! A small element tree for the XML OpenNebula speaks (XML-RPC envelopes and
//! the VM / template documents inside them): text, CDATA and entity
//! references folded into one string per element. Attributes are not needed.
use quick_xml::Reader;
use quick_xml::events::Event;

/// One XML element with its text and child elements, in document order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Element {
    pub name: String,
    pub text: String,
    pub children: Vec<Element>,
}

impl Element {
    /// The first child named `name`.
    pub fn child(&self, name: &str) -> Option<&Element> {
        self.children.iter().find(|c| c.name == name)
    }

    /// Every child named `name`.
    pub fn children_named<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a Element> + 'a {
        self.children.iter().filter(move |c| c.name == name)
    }

    /// The trimmed text of the first child named `name`.
    pub fn child_text(&self, name: &str) -> Option<&str> {
        self.child(name).map(|c| c.text.trim())
    }

    /// The path of children `a/b/c`, first match at each step.
    pub fn path(&self, path: &str) -> Option<&Element> {
        path.split('/').try_fold(self, |e, step| e.child(step))
    }
}

/// How deep elements may nest. OpenNebula's documents (an XML-RPC envelope
/// around a VM pool with its template) stay under 20 levels; the limit keeps a
/// hostile reply from overflowing the stack of the decoders that recurse.
pub const MAX_DEPTH: usize = 64;

/// Parses a whole document into its root element: exactly one root, closed
/// before the end, nested at most [`MAX_DEPTH`] deep. Errors are plain
/// messages; the caller knows which document and endpoint it was.
pub fn parse(text: &str) -> Result<Element, String> {
    let mut reader = Reader::from_str(text);
    let mut stack: Vec<Element> = Vec::new();
    let mut root: Option<Element> = None;
    loop {
        let event = reader
            .read_event()
            .map_err(|e| format!("malformed XML at byte {}: {e}", reader.buffer_position()))?;
        match event {
            Event::Start(start) => {
                if stack.len() >= MAX_DEPTH {
                    return Err(format!(
                        "elements nested deeper than {MAX_DEPTH} levels at byte {}",
                        reader.buffer_position()
                    ));
                }
                stack.push(Element {
                    name: start.name().into_inner().to_string(),
                    ..Element::default()
                })
            }
            Event::Empty(start) => {
                let element = Element {
                    name: start.name().into_inner().to_string(),
                    ..Element::default()
                };
                attach(&mut stack, &mut root, element)?;
            }
            Event::End(_) => {
                let done = stack
                    .pop()
                    .ok_or_else(|| "closing tag without an opening one".to_string())?;
                attach(&mut stack, &mut root, done)?;
            }
            Event::Text(t) => {
                if let Some(top) = stack.last_mut() {
                    top.text.push_str(&t.xml10_content());
                }
            }
            Event::CData(t) => {
                if let Some(top) = stack.last_mut() {
                    top.text.push_str(&t.xml10_content());
                }
            }
            Event::GeneralRef(r) => {
                let resolved = match r.resolve_char_ref() {
                    Ok(Some(c)) => c.to_string(),
                    Ok(None) => named_entity(&r)
                        .ok_or_else(|| format!("unknown entity &{};", &*r))?
                        .to_string(),
                    Err(e) => return Err(format!("bad character reference &{};: {e}", &*r)),
                };
                if let Some(top) = stack.last_mut() {
                    top.text.push_str(&resolved);
                }
            }
            Event::Eof => break,
            _ => {}
        }
    }
    if !stack.is_empty() {
        return Err("document ended before its root element closed".into());
    }
    root.ok_or_else(|| "empty document".into())
}

/// Hangs a closed element under its parent, or makes it the root; a second
/// root is an error (the sim relies on that to tell XML from `A = "b"` text).
fn attach(
    stack: &mut [Element],
    root: &mut Option<Element>,
    element: Element,
) -> Result<(), String> {
    match stack.last_mut() {
        Some(parent) => parent.children.push(element),
        None if root.is_none() => *root = Some(element),
        None => return Err("more than one root element".into()),
    }
    Ok(())
}

fn named_entity(name: &str) -> Option<&'static str> {
    Some(match name {
        "lt" => "<",
        "gt" => ">",
        "amp" => "&",
        "quot" => "\"",
        "apos" => "'",
        _ => return None,
    })
}

/// Escapes text for an element body.
pub fn escape(text: &str) -> String {
    quick_xml::escape::escape(text).into_owned()
}

/// `text` as CDATA, the way OpenNebula writes template values (split around
/// any `]]>`).
pub fn cdata(text: &str) -> String {
    format!("<![CDATA[{}]]>", text.replace("]]>", "]]]]><![CDATA[>"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nesting_is_bounded() {
        let deep = |n: usize| "<a>".repeat(n) + &"</a>".repeat(n);
        assert!(parse(&deep(MAX_DEPTH)).is_ok());
        let err = parse(&deep(100_000)).unwrap_err();
        assert!(err.contains("nested deeper than 64"), "{err}");
    }

    #[test]
    fn text_cdata_and_entities_fold_together() {
        let root = parse(
            "<?xml version=\"1.0\"?><VM><NAME><![CDATA[w-1]]></NAME><T>a &lt;b&gt; &#65;&amp;</T><E/></VM>",
        )
        .unwrap();
        assert_eq!(root.name, "VM");
        assert_eq!(root.child_text("NAME"), Some("w-1"));
        assert_eq!(root.child_text("T"), Some("a <b> A&"));
        assert!(root.child("E").is_some());
    }

    #[test]
    fn broken_documents_are_errors() {
        assert!(parse("<VM><NAME>x</VM>").is_err());
        assert!(parse("<VM>").is_err());
        assert!(parse("").is_err());
        assert!(parse("<VM>&bogus;</VM>").is_err());
        assert!(parse("<a/><b/>").is_err());
    }

    #[test]
    fn cdata_survives_its_terminator() {
        let text = format!("<v>{}</v>", cdata("a]]>b"));
        assert_eq!(parse(&text).expect("parses").text, "a]]>b");
    }
}
