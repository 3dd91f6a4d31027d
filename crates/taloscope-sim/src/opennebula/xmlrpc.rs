//! XML-RPC on the wire for the OpenNebula sim: `methodCall` parsing (the XML-RPC spec,
//! xmlrpc.com/spec.md, plus xmlrpc-c's `<i8>` that oned speaks) and `methodResponse` writing in
//! oned's shape (`[success, body or message, error code]`, plus the object id and replication
//! index on failure: OpenNebula/one `src/rm/Request.cc`), and the error codes of `include/Request.h`.
use super::xml::{self, Node};

/// oned's `Request::ErrorCode`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ErrorCode {
    Authentication = 0x0100,
    Authorization = 0x0200,
    NoExists = 0x0400,
    Action = 0x0800,
    RpcApi = 0x1000,
    Internal = 0x2000,
}

/// A parameter value.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Param {
    Int(i64),
    Bool(bool),
    Str(String),
    Other,
}

/// A parsed `methodCall`.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct MethodCall {
    pub method: String,
    pub params: Vec<Param>,
}

impl MethodCall {
    pub fn string(&self, i: usize) -> Option<&str> {
        match self.params.get(i) {
            Some(Param::Str(s)) => Some(s),
            _ => None,
        }
    }

    pub fn int(&self, i: usize) -> Option<i64> {
        match self.params.get(i) {
            Some(Param::Int(v)) => Some(*v),
            _ => None,
        }
    }

    pub fn bool(&self, i: usize) -> Option<bool> {
        match self.params.get(i) {
            Some(Param::Bool(b)) => Some(*b),
            Some(Param::Int(v)) => Some(*v != 0),
            _ => None,
        }
    }
}

/// Parses a `methodCall` document: `<methodName>` then `<params>` of `<param><value>`s.
pub(crate) fn parse_call(body: &str) -> Result<MethodCall, String> {
    let root = xml::read_document(body)?;
    if root.name != "methodCall" {
        return Err(format!("expected <methodCall>, found <{}>", root.name));
    }
    let method = root
        .child("methodName")
        .map(|m| m.text.trim().to_string())
        .filter(|m| !m.is_empty())
        .ok_or("methodCall without a methodName")?;
    let params = root
        .child("params")
        .map(|ps| {
            ps.children
                .iter()
                .filter(|p| p.name == "param")
                .map(|p| p.child("value").map(param).unwrap_or(Param::Other))
                .collect()
        })
        .unwrap_or_default();
    Ok(MethodCall { method, params })
}

/// One `<value>`. The spec: a value without a type element is a string; `<i4>`/`<int>` are
/// 32-bit and `<i8>` (xmlrpc-c) 64-bit integers; `<boolean>` is 0 or 1. The sim's methods take
/// nothing else (oned reads params with xmlrpc-c's `paramList::getInt/getBoolean/getString`,
/// OpenNebula/one `src/rm/RequestManagerVirtualMachine.cc`), so every other type, and a
/// malformed scalar, is `Other` and fails the method's own parameter check.
fn param(value: &Node) -> Param {
    let Some(typed) = value.only_child() else {
        return if value.children.is_empty() {
            Param::Str(value.text.clone())
        } else {
            Param::Other
        };
    };
    let text = typed.text.as_str();
    match typed.name.as_str() {
        "string" => Param::Str(text.to_string()),
        "i4" | "int" => text
            .trim()
            .parse::<i32>()
            .map_or(Param::Other, |v| Param::Int(v.into())),
        "i8" => text.trim().parse::<i64>().map_or(Param::Other, Param::Int),
        "boolean" => match text.trim() {
            "1" => Param::Bool(true),
            "0" => Param::Bool(false),
            _ => Param::Other,
        },
        _ => Param::Other,
    }
}

fn response(values: &[String]) -> String {
    let mut out = String::from(
        "<?xml version=\"1.0\"?>\r\n<methodResponse>\r\n<params>\r\n<param>\r\n<value><array><data>\r\n",
    );
    for v in values {
        out.push_str("<value>");
        out.push_str(v);
        out.push_str("</value>\r\n");
    }
    out.push_str("</data></array></value>\r\n</param>\r\n</params>\r\n</methodResponse>\r\n");
    out
}

/// Success with a string body (an XML document or a version).
pub(crate) fn success_string(body: &str) -> String {
    response(&[
        "<boolean>1</boolean>".into(),
        format!("<string>{}</string>", xml::escape(body)),
        "<i4>0</i4>".into(),
    ])
}

/// Success with an object id.
pub(crate) fn success_int(id: i64) -> String {
    response(&[
        "<boolean>1</boolean>".into(),
        format!("<i4>{id}</i4>"),
        "<i4>0</i4>".into(),
    ])
}

/// Failure: the message, the error code, the object that caused it, the replication index.
pub(crate) fn failure(message: &str, code: ErrorCode, object_id: i64) -> String {
    response(&[
        "<boolean>0</boolean>".into(),
        format!("<string>{}</string>", xml::escape(message)),
        format!("<i4>{}</i4>", code as i64),
        format!("<i4>{object_id}</i4>"),
        "<i8>0</i8>".into(),
    ])
}

/// An XML-RPC `<fault>` (a request that is not a well-formed call at all).
pub(crate) fn fault(code: i64, message: &str) -> String {
    format!(
        "<?xml version=\"1.0\"?>\r\n<methodResponse><fault><value><struct>\
         <member><name>faultCode</name><value><int>{code}</int></value></member>\
         <member><name>faultString</name><value><string>{}</string></value></member>\
         </struct></value></fault></methodResponse>\r\n",
        xml::escape(message)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_typed_and_untyped_params() {
        let call = parse_call(
            "<?xml version='1.0'?><methodCall><methodName>one.vm.action</methodName><params>\
             <param><value><string>oneadmin:pw&amp;x</string></value></param>\
             <param><value>terminate</value></param>\
             <param><value><int>7</int></value></param>\
             <param><value><boolean>1</boolean></value></param></params></methodCall>",
        )
        .expect("parses");
        assert_eq!(call.method, "one.vm.action");
        assert_eq!(call.string(0), Some("oneadmin:pw&x"));
        assert_eq!(call.string(1), Some("terminate"));
        assert_eq!(call.int(2), Some(7));
        assert_eq!(call.bool(3), Some(true));
    }

    #[test]
    fn scalars_outside_their_range_or_form_are_not_taken() {
        let call = parse_call(
            "<methodCall><methodName>m</methodName><params>\
             <param><value><i4>4294967296</i4></value></param>\
             <param><value><i8>4294967296</i8></value></param>\
             <param><value><boolean>yes</boolean></value></param>\
             <param><value><double>1.5</double></value></param>\
             <param><value><string></string></value></param></params></methodCall>",
        )
        .expect("parses");
        assert_eq!(
            call.params,
            [
                Param::Other,
                Param::Int(4_294_967_296),
                Param::Other,
                Param::Other,
                Param::Str(String::new())
            ]
        );
    }

    #[test]
    fn responses_escape_their_body() {
        let ok = success_string("<VM><NAME>a&b</NAME></VM>");
        assert!(ok.contains("<string>&lt;VM&gt;&lt;NAME&gt;a&amp;b"));
        let back = xml::read_document(&ok).expect("well-formed");
        assert_eq!(back.name, "methodResponse");
        let bad = failure(
            "[one.vm.info] Error getting virtual machine [9].",
            ErrorCode::NoExists,
            9,
        );
        assert!(bad.contains("<i4>1024</i4>"));
        assert!(parse_call("<methodResponse/>").is_err());
    }
}
