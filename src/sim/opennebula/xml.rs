//! The XML the OpenNebula sim reads and writes: a small element tree parsed with quick-xml
//! (XML-RPC calls, templates sent as `<TEMPLATE>` XML) and the escaping helpers for writing it.
use quick_xml::events::Event;
use quick_xml::reader::Reader;

/// One element: its name, text (entities and CDATA resolved) and child elements.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Element {
    pub name: String,
    pub text: String,
    pub children: Vec<Element>,
}

impl Element {
    /// The first child called `name`.
    pub fn child(&self, name: &str) -> Option<&Element> {
        self.children.iter().find(|c| c.name == name)
    }
}

/// Parses a whole document into its root element.
pub(crate) fn parse(text: &str) -> Result<Element, String> {
    let mut reader = Reader::from_str(text);
    let mut stack: Vec<Element> = Vec::new();
    let mut root: Option<Element> = None;
    loop {
        let event = reader
            .read_event()
            .map_err(|e| format!("malformed XML at byte {}: {e}", reader.buffer_position()))?;
        match event {
            Event::Start(start) => stack.push(Element {
                name: start.name().as_ref().to_string(),
                ..Element::default()
            }),
            Event::Empty(start) => {
                let element = Element {
                    name: start.name().as_ref().to_string(),
                    ..Element::default()
                };
                attach(&mut stack, &mut root, element)?;
            }
            Event::End(_) => {
                let element = stack.pop().ok_or("closing tag without an opening one")?;
                attach(&mut stack, &mut root, element)?;
            }
            Event::Text(t) => {
                if let Some(open) = stack.last_mut() {
                    open.text.push_str(&t.xml10_content());
                }
            }
            Event::CData(c) => {
                if let Some(open) = stack.last_mut() {
                    open.text.push_str(&c.into_inner());
                }
            }
            Event::GeneralRef(r) => {
                let resolved = match r.resolve_char_ref() {
                    Ok(Some(c)) => c.to_string(),
                    Ok(None) => match r.as_ref() {
                        "lt" => "<".into(),
                        "gt" => ">".into(),
                        "amp" => "&".into(),
                        "apos" => "'".into(),
                        "quot" => "\"".into(),
                        other => return Err(format!("unknown entity &{other};")),
                    },
                    Err(e) => return Err(format!("bad character reference: {e}")),
                };
                if let Some(open) = stack.last_mut() {
                    open.text.push_str(&resolved);
                }
            }
            Event::Eof => break,
            _ => {}
        }
    }
    if !stack.is_empty() {
        return Err("document ends inside an element".into());
    }
    root.ok_or_else(|| "empty document".into())
}

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

/// Text content escaped for XML (`&`, `<`, `>`, quotes).
pub(crate) fn escape(text: &str) -> String {
    quick_xml::escape::escape(text).into_owned()
}

/// `text` as CDATA, the way OpenNebula writes template values (split around any `]]>`).
pub(crate) fn cdata(text: &str) -> String {
    format!("<![CDATA[{}]]>", text.replace("]]>", "]]]]><![CDATA[>"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_entities_cdata_and_nesting() {
        let root = parse(
            "<?xml version=\"1.0\"?><a><b>x &lt;y&gt; &#65;&amp;</b><c><![CDATA[<raw>]]></c><d/></a>",
        )
        .expect("parses");
        assert_eq!(root.name, "a");
        assert_eq!(root.child("b").map(|b| b.text.as_str()), Some("x <y> A&"));
        assert_eq!(root.child("c").map(|c| c.text.as_str()), Some("<raw>"));
        assert!(root.child("d").is_some());
    }

    #[test]
    fn refuses_broken_documents() {
        assert!(parse("<a><b></a>").is_err());
        assert!(parse("").is_err());
        assert!(parse("<a/><b/>").is_err());
    }

    #[test]
    fn cdata_survives_its_terminator() {
        let text = format!("<v>{}</v>", cdata("a]]>b"));
        assert_eq!(parse(&text).expect("parses").text, "a]]>b");
    }
}
