//! The XML-RPC codec: `methodCall` bodies out, `methodResponse` bodies in,
//! and OpenNebula's response convention (`[ok, result-or-message, code, …]`)
//! turned into a result or a typed fault. No IO here.
use std::fmt;

use super::xml::{self, Element};

/// An XML-RPC value.
#[derive(Clone, PartialEq)]
pub enum Value {
    Int(i64),
    Bool(bool),
    Str(String),
    Double(f64),
    Array(Vec<Value>),
    Struct(Vec<(String, Value)>),
    Nil,
}

impl fmt::Debug for Value {
    // Strings are shown by length only: parameters carry the session string
    // (user:password) and templates carrying USER_DATA.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Int(i) => write!(f, "Int({i})"),
            Value::Bool(b) => write!(f, "Bool({b})"),
            Value::Str(s) => write!(f, "Str(<{} bytes>)", s.len()),
            Value::Double(d) => write!(f, "Double({d})"),
            Value::Array(a) => f.debug_list().entries(a).finish(),
            Value::Struct(m) => f
                .debug_map()
                .entries(m.iter().map(|(k, v)| (k, v)))
                .finish(),
            Value::Nil => write!(f, "Nil"),
        }
    }
}

impl From<&str> for Value {
    fn from(s: &str) -> Value {
        Value::Str(s.to_string())
    }
}

impl From<String> for Value {
    fn from(s: String) -> Value {
        Value::Str(s)
    }
}

impl From<i64> for Value {
    fn from(i: i64) -> Value {
        Value::Int(i)
    }
}

impl From<bool> for Value {
    fn from(b: bool) -> Value {
        Value::Bool(b)
    }
}

/// The body of a `methodCall`.
pub fn encode_call(method: &str, params: &[Value]) -> String {
    let mut out = String::from("<?xml version=\"1.0\"?>\n<methodCall><methodName>");
    out.push_str(&xml::escape(method));
    out.push_str("</methodName><params>");
    for p in params {
        out.push_str("<param>");
        encode_value(p, &mut out);
        out.push_str("</param>");
    }
    out.push_str("</params></methodCall>\n");
    out
}

fn encode_value(v: &Value, out: &mut String) {
    out.push_str("<value>");
    match v {
        Value::Int(i) if i32::try_from(*i).is_ok() => out.push_str(&format!("<int>{i}</int>")),
        Value::Int(i) => out.push_str(&format!("<i8>{i}</i8>")),
        Value::Bool(b) => out.push_str(if *b {
            "<boolean>1</boolean>"
        } else {
            "<boolean>0</boolean>"
        }),
        Value::Str(s) => {
            out.push_str("<string>");
            out.push_str(&xml::escape(s));
            out.push_str("</string>");
        }
        Value::Double(d) => out.push_str(&format!("<double>{d}</double>")),
        Value::Array(items) => {
            out.push_str("<array><data>");
            for item in items {
                encode_value(item, out);
            }
            out.push_str("</data></array>");
        }
        Value::Struct(members) => {
            out.push_str("<struct>");
            for (name, value) in members {
                out.push_str("<member><name>");
                out.push_str(&xml::escape(name));
                out.push_str("</name>");
                encode_value(value, out);
                out.push_str("</member>");
            }
            out.push_str("</struct>");
        }
        Value::Nil => out.push_str("<nil/>"),
    }
    out.push_str("</value>");
}

/// What a `methodResponse` held.
#[derive(Debug, Clone, PartialEq)]
pub enum Response {
    /// `<params><param><value>…`
    Value(Value),
    /// `<fault>` with its faultCode and faultString.
    Fault { code: i64, message: String },
}

/// Parses a `methodResponse` body.
pub fn decode_response(body: &str) -> Result<Response, String> {
    let root = xml::parse(body)?;
    if root.name != "methodResponse" {
        return Err(format!("expected <methodResponse>, got <{}>", root.name));
    }
    if let Some(fault) = root.child("fault") {
        let value = fault
            .child("value")
            .ok_or("<fault> without a <value>")
            .and_then(|v| decode_value(v).map_err(|_| "<fault> with a bad <value>"))?;
        let Value::Struct(members) = value else {
            return Err("<fault> value is not a struct".into());
        };
        let mut code = 0;
        let mut message = String::new();
        for (name, v) in members {
            match (name.as_str(), v) {
                ("faultCode", Value::Int(c)) => code = c,
                ("faultString", Value::Str(s)) => message = s,
                _ => {}
            }
        }
        return Ok(Response::Fault { code, message });
    }
    let value = root
        .path("params/param/value")
        .ok_or("<methodResponse> has neither <params><param><value> nor <fault>")?;
    decode_value(value).map(Response::Value)
}

/// Decodes one `<value>` element. A value without a type element is a string.
pub fn decode_value(value: &Element) -> Result<Value, String> {
    let Some(typed) = value.children.first() else {
        return Ok(Value::Str(value.text.clone()));
    };
    let text = typed.text.trim();
    let int = |t: &str| {
        t.parse::<i64>()
            .map_err(|_| format!("<{}> holds {t:?}, not an integer", typed.name))
    };
    Ok(match typed.name.as_str() {
        "int" | "i4" | "i8" | "i2" | "i1" => Value::Int(int(text)?),
        "boolean" => match text {
            "1" | "true" => Value::Bool(true),
            "0" | "false" => Value::Bool(false),
            other => return Err(format!("<boolean> holds {other:?}")),
        },
        "string" => Value::Str(typed.text.clone()),
        "double" => Value::Double(
            text.parse()
                .map_err(|_| format!("<double> holds {text:?}"))?,
        ),
        "nil" => Value::Nil,
        "array" => {
            let data = typed.child("data").ok_or("<array> without <data>")?;
            Value::Array(
                data.children_named("value")
                    .map(decode_value)
                    .collect::<Result<_, _>>()?,
            )
        }
        "struct" => Value::Struct(
            typed
                .children_named("member")
                .map(|m| {
                    let name = m.child_text("name").ok_or("<member> without <name>")?;
                    let v = m.child("value").ok_or("<member> without <value>")?;
                    Ok((name.to_string(), decode_value(v)?))
                })
                .collect::<Result<_, String>>()?,
        ),
        // base64 and dateTime are not used by the methods called here; keep
        // their text rather than fail.
        _ => Value::Str(typed.text.clone()),
    })
}

/// OpenNebula's answer: `[true, result, code]` or `[false, message, code, id?, index?]`.
#[derive(Debug, Clone, PartialEq)]
pub enum OneReply {
    Ok(Value),
    Failed { code: i64, message: String },
}

/// Interprets a decoded value by OpenNebula's response convention.
pub fn one_reply(value: Value) -> Result<OneReply, String> {
    let Value::Array(items) = value else {
        return Err("response is not an array".into());
    };
    let mut items = items.into_iter();
    let ok = match items.next() {
        Some(Value::Bool(b)) => b,
        Some(Value::Int(i)) => i != 0,
        _ => return Err("response array does not start with a boolean".into()),
    };
    let result = items.next().ok_or("response array has no result")?;
    let code = match items.next() {
        Some(Value::Int(c)) => c,
        _ => 0,
    };
    if ok {
        Ok(OneReply::Ok(result))
    } else {
        let message = match result {
            Value::Str(s) => s,
            other => format!("{other:?}"),
        };
        Ok(OneReply::Failed { code, message })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn call_is_escaped_and_typed() {
        let body = encode_call(
            "one.vm.action",
            &[
                "oneadmin:p<&>".into(),
                "terminate".into(),
                Value::Int(42),
                Value::Int(1 << 40),
                Value::Bool(false),
            ],
        );
        assert!(body.contains("<methodName>one.vm.action</methodName>"));
        assert!(body.contains("<string>oneadmin:p&lt;&amp;&gt;</string>"));
        assert!(body.contains("<int>42</int>"));
        assert!(body.contains("<i8>1099511627776</i8>"));
        assert!(body.contains("<boolean>0</boolean>"));
    }

    #[test]
    fn call_round_trips_through_the_decoder() {
        let params = vec![
            Value::Str("a & b".into()),
            Value::Array(vec![Value::Int(-1), Value::Bool(true)]),
            Value::Struct(vec![("k".into(), Value::Double(1.5))]),
        ];
        let body = encode_call("m", &params);
        let root = xml::parse(&body).unwrap();
        let decoded: Vec<Value> = root
            .child("params")
            .unwrap()
            .children_named("param")
            .map(|p| decode_value(p.child("value").unwrap()).unwrap())
            .collect();
        assert_eq!(decoded, params);
    }

    #[test]
    fn success_with_escaped_xml_document() {
        let body = "<?xml version=\"1.0\"?><methodResponse><params><param><value><array><data>\
            <value><boolean>1</boolean></value>\
            <value><string>&lt;VM&gt;&lt;ID&gt;7&lt;/ID&gt;&lt;/VM&gt;</string></value>\
            <value><i4>0</i4></value></data></array></value></param></params></methodResponse>";
        let Response::Value(v) = decode_response(body).unwrap() else {
            panic!("not a value")
        };
        assert_eq!(
            one_reply(v).unwrap(),
            OneReply::Ok(Value::Str("<VM><ID>7</ID></VM>".into()))
        );
    }

    #[test]
    fn failure_with_resp_id_and_i8_index() {
        let body = "<methodResponse><params><param><value><array><data>\
            <value><boolean>0</boolean></value>\
            <value><string>[one.vm.info] User couldn't be authenticated, aborting call.</string></value>\
            <value><int>256</int></value><value><int>-1</int></value><value><i8>0</i8></value>\
            </data></array></value></param></params></methodResponse>";
        let Response::Value(v) = decode_response(body).unwrap() else {
            panic!()
        };
        let OneReply::Failed { code, message } = one_reply(v).unwrap() else {
            panic!()
        };
        assert_eq!(code, 256);
        assert!(message.contains("authenticated"));
    }

    #[test]
    fn untyped_value_is_a_string_and_int_result_decodes() {
        let body = "<methodResponse><params><param><value><array><data>\
            <value><boolean>1</boolean></value><value><int>12</int></value>\
            <value>plain</value></data></array></value></param></params></methodResponse>";
        let Response::Value(Value::Array(items)) = decode_response(body).unwrap() else {
            panic!()
        };
        assert_eq!(items[1], Value::Int(12));
        assert_eq!(items[2], Value::Str("plain".into()));
    }

    #[test]
    fn fault_is_decoded() {
        let body = "<methodResponse><fault><value><struct>\
            <member><name>faultCode</name><value><int>-501</int></value></member>\
            <member><name>faultString</name><value><string>No such method</string></value></member>\
            </struct></value></fault></methodResponse>";
        assert_eq!(
            decode_response(body).unwrap(),
            Response::Fault {
                code: -501,
                message: "No such method".into()
            }
        );
    }

    #[test]
    fn garbage_is_an_error_not_a_panic() {
        for body in [
            "",
            "<html>502</html>",
            "<methodResponse/>",
            "<methodResponse><params><param><value><int>x</int></value></param></params></methodResponse>",
            "<methodResponse><params><param><value><array/></value></param></params></methodResponse>",
        ] {
            assert!(decode_response(body).is_err(), "{body}");
        }
        assert!(one_reply(Value::Int(1)).is_err());
        assert!(one_reply(Value::Array(vec![])).is_err());
    }

    #[test]
    fn debug_hides_strings() {
        let v = Value::Str("oneadmin:secret".into());
        assert!(!format!("{v:?}").contains("secret"));
    }
}
