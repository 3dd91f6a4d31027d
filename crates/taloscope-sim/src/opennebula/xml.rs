//! The sim's XML, on quick-xml directly: a small element tree for the documents oned reads
//! (XML-RPC `methodCall`s, `<TEMPLATE>` bodies), and escaping and CDATA for the ones it writes.
//! The server side of the wire; the console's client reads XML with code of its own.
use quick_xml::Reader;
use quick_xml::events::{BytesStart, Event};

/// Deeper than any document oned or OneFlow exchange (a struct inside an array inside a
/// `methodCall` is 8): anything deeper is refused rather than followed.
const MAX_DEPTH: usize = 32;

/// An element: its name, its text (character data and CDATA, concatenated), its children.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Node {
    pub name: String,
    pub text: String,
    pub children: Vec<Node>,
}

impl Node {
    /// The first child called `name`.
    pub fn child(&self, name: &str) -> Option<&Node> {
        self.children.iter().find(|c| c.name == name)
    }

    /// The only child element, if there is exactly one.
    pub fn only_child(&self) -> Option<&Node> {
        match self.children.as_slice() {
            [one] => Some(one),
            _ => None,
        }
    }
}

/// Reads a document into its root element. Declarations, comments and processing
/// instructions are skipped; a second root, a stray end tag or text outside the root is an error.
pub(crate) fn read_document(text: &str) -> Result<Node, String> {
    let mut reader = Reader::from_str(text);
    let mut open: Vec<Node> = Vec::new();
    let mut root: Option<Node> = None;
    loop {
        let event = reader
            .read_event()
            .map_err(|e| format!("malformed XML at byte {}: {e}", reader.error_position()))?;
        match event {
            Event::Start(start) => {
                if root.is_some() {
                    return Err("content after the root element".into());
                }
                if open.len() == MAX_DEPTH {
                    return Err(format!("elements nested deeper than {MAX_DEPTH}"));
                }
                open.push(node_for(&start));
            }
            Event::Empty(start) => {
                let node = node_for(&start);
                close(&mut open, &mut root, node)?;
            }
            Event::End(_) => {
                // quick-xml checks that the end tag matches the open one.
                let node = open.pop().ok_or("an end tag without a start tag")?;
                close(&mut open, &mut root, node)?;
            }
            Event::Text(text) => append_text(&mut open, &text.xml10_content())?,
            Event::CData(cdata) => {
                append_text(&mut open, &cdata.into_inner())?;
            }
            Event::GeneralRef(reference) => {
                let resolved = match reference.resolve_char_ref() {
                    Ok(Some(c)) => c.to_string(),
                    Ok(None) => {
                        let name = reference.xml10_content();
                        quick_xml::escape::resolve_xml_entity(&name)
                            .ok_or_else(|| format!("unknown entity &{name};"))?
                            .to_string()
                    }
                    Err(e) => return Err(format!("bad character reference: {e}")),
                };
                append_text(&mut open, &resolved)?;
            }
            Event::Decl(_) | Event::Comment(_) | Event::PI(_) | Event::DocType(_) => {}
            Event::Eof => break,
        }
    }
    if let Some(unclosed) = open.last() {
        return Err(format!("<{}> is not closed", unclosed.name));
    }
    root.ok_or_else(|| "no root element".to_string())
}

fn node_for(start: &BytesStart) -> Node {
    Node {
        name: start.name().as_ref().to_string(),
        ..Node::default()
    }
}

/// A finished element joins its parent, or becomes the root.
fn close(open: &mut [Node], root: &mut Option<Node>, node: Node) -> Result<(), String> {
    match open.last_mut() {
        Some(parent) => parent.children.push(node),
        None if root.is_none() => *root = Some(node),
        None => return Err("a second root element".into()),
    }
    Ok(())
}

fn append_text(open: &mut [Node], text: &str) -> Result<(), String> {
    match open.last_mut() {
        Some(node) => node.text.push_str(text),
        None if text.trim().is_empty() => {}
        None => return Err("text outside the root element".into()),
    }
    Ok(())
}

/// `text` as XML character data: the five characters XML reserves become entities.
pub(crate) fn escape(text: &str) -> String {
    quick_xml::escape::escape(text).into_owned()
}

/// `text` in a CDATA section, as oned writes template values (`src/template/Template.cc`,
/// `to_xml`). A `]]>` inside is split across two sections, the only way CDATA can carry it.
pub(crate) fn cdata(text: &str) -> String {
    format!("<![CDATA[{}]]>", text.replace("]]>", "]]]]><![CDATA[>"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_text_entities_and_cdata_into_a_tree() {
        let root = read_document(
            "<?xml version=\"1.0\"?><!-- c --><A><B>x &amp; &#65;&lt;</B><C><![CDATA[<y>]]></C><D/></A>",
        )
        .expect("reads");
        assert_eq!(root.name, "A");
        assert_eq!(root.child("B").map(|b| b.text.as_str()), Some("x & A<"));
        assert_eq!(root.child("C").map(|c| c.text.as_str()), Some("<y>"));
        assert_eq!(root.children.len(), 3);
        assert!(root.child("D").is_some_and(|d| d.only_child().is_none()));
    }

    #[test]
    fn refuses_broken_documents() {
        for bad in [
            "",
            "<A>",
            "<A></B>",
            "<A/><B/>",
            "text<A/>",
            "<A>&nope;</A>",
        ] {
            assert!(read_document(bad).is_err(), "{bad:?} was accepted");
        }
    }

    #[test]
    fn depth_is_bounded() {
        let deep = |n: usize| format!("{}{}", "<a>".repeat(n), "</a>".repeat(n));
        assert!(read_document(&deep(MAX_DEPTH)).is_ok());
        let err = read_document(&deep(MAX_DEPTH + 1)).unwrap_err();
        assert!(err.contains("deeper"), "{err}");
    }

    #[test]
    fn escaped_and_cdata_text_reads_back_as_written() {
        let text = "a <b> & \"c\" 'd' ]]> e";
        let doc = format!("<R><E>{}</E><C>{}</C></R>", escape(text), cdata(text));
        let root = read_document(&doc).expect("reads");
        assert_eq!(root.child("E").map(|e| e.text.as_str()), Some(text));
        assert_eq!(root.child("C").map(|c| c.text.as_str()), Some(text));
    }
}
