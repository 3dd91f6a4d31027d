//! VM templates: the `<VMTEMPLATE>` document decoded into [`TemplateInfo`],
//! and the `extra_template` sent on instantiate. OpenNebula replaces whole
//! attributes, so the template's own CONTEXT is merged with USER_DATA here.
use std::fmt;

use base64::Engine;

use super::quota::Amount;
use super::xml::Element;

/// A VM template: its id, name, CONTEXT attributes in template order, and the CPU and MEMORY
/// (MB) each of its VMs counts against the VM quota (absent or unreadable: none).
#[derive(Clone, PartialEq, Eq)]
pub struct TemplateInfo {
    pub id: u64,
    pub name: String,
    pub context: Vec<(String, String)>,
    pub cpu: Option<Amount>,
    pub memory: Option<Amount>,
}

impl fmt::Debug for TemplateInfo {
    // CONTEXT values may hold secrets (tokens, a USER_DATA of its own).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TemplateInfo")
            .field("id", &self.id)
            .field("name", &self.name)
            .field("cpu", &self.cpu)
            .field("memory", &self.memory)
            .field(
                "context_keys",
                &self.context.iter().map(|(k, _)| k).collect::<Vec<_>>(),
            )
            .finish()
    }
}

impl TemplateInfo {
    pub fn from_element(t: &Element) -> Result<TemplateInfo, String> {
        let id = t
            .child_text("ID")
            .and_then(|s| s.parse().ok())
            .ok_or("<VMTEMPLATE> without a numeric <ID>")?;
        let context = t
            .path("TEMPLATE/CONTEXT")
            .map(|c| {
                c.children
                    .iter()
                    .map(|a| (a.name.clone(), a.text.clone()))
                    .collect()
            })
            .unwrap_or_default();
        let amount = |name: &str| {
            t.path(&format!("TEMPLATE/{name}"))
                .and_then(|e| Amount::parse(&e.text))
        };
        Ok(TemplateInfo {
            id,
            name: t.child_text("NAME").unwrap_or_default().to_string(),
            context,
            cpu: amount("CPU"),
            memory: amount("MEMORY"),
        })
    }
}

/// Decodes a `<VMTEMPLATE_POOL>`; entries that cannot be decoded are skipped.
pub fn templates_from_pool(pool: &Element) -> Vec<TemplateInfo> {
    pool.children_named("VMTEMPLATE")
        .filter_map(|t| TemplateInfo::from_element(t).ok())
        .collect()
}

/// The extra template for one instantiate: the whole CONTEXT (the template's
/// own attributes, with USER_DATA and USER_DATA_ENCODING set) plus top-level
/// tags. Talos always base64-decodes USER_DATA.
#[derive(Clone, PartialEq, Eq)]
pub struct ExtraTemplate {
    context: Vec<(String, String)>,
    attributes: Vec<(String, String)>,
}

impl fmt::Debug for ExtraTemplate {
    // USER_DATA is a whole machine config with its secrets.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ExtraTemplate")
            .field(
                "context_keys",
                &self.context.iter().map(|(k, _)| k).collect::<Vec<_>>(),
            )
            .field("attributes", &self.attributes)
            .finish()
    }
}

impl ExtraTemplate {
    /// Merges `machine_config` into the template's CONTEXT. Keys compare
    /// case-insensitively, as OpenNebula's do; an existing key keeps its place.
    pub fn with_user_data(template_context: &[(String, String)], machine_config: &[u8]) -> Self {
        let mut context = template_context.to_vec();
        let encoded = base64::engine::general_purpose::STANDARD.encode(machine_config);
        set(&mut context, "USER_DATA", encoded);
        set(&mut context, "USER_DATA_ENCODING", "base64".to_string());
        ExtraTemplate {
            context,
            attributes: Vec::new(),
        }
    }

    /// Top-level attributes only: the template's CONTEXT stays as it is, without USER_DATA
    /// (Talos then boots into maintenance mode).
    pub fn attributes_only() -> Self {
        ExtraTemplate {
            context: Vec::new(),
            attributes: Vec::new(),
        }
    }

    /// Adds a top-level attribute (e.g. `TALOSCOPE_CLUSTER`).
    pub fn attribute(mut self, key: &str, value: &str) -> Self {
        set(&mut self.attributes, key, value.to_string());
        self
    }

    pub fn context(&self) -> &[(String, String)] {
        &self.context
    }

    /// OpenNebula template syntax: `KEY="value"` lines and `CONTEXT=[…]`.
    pub fn render(&self) -> String {
        let mut out = String::new();
        for (k, v) in &self.attributes {
            out.push_str(&format!("{k}=\"{}\"\n", quote(v)));
        }
        if !self.context.is_empty() {
            let body: Vec<String> = self
                .context
                .iter()
                .map(|(k, v)| format!("  {k}=\"{}\"", quote(v)))
                .collect();
            out.push_str(&format!("CONTEXT=[\n{}\n]\n", body.join(",\n")));
        }
        out
    }
}

fn set(pairs: &mut Vec<(String, String)>, key: &str, value: String) {
    match pairs.iter_mut().find(|(k, _)| k.eq_ignore_ascii_case(key)) {
        Some(pair) => pair.1 = value,
        None => pairs.push((key.to_string(), value)),
    }
}

/// Escapes a value for a double-quoted template string.
fn quote(v: &str) -> String {
    v.replace('\\', "\\\\").replace('"', "\\\"")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::opennebula::xml;

    fn talos_template() -> TemplateInfo {
        let doc = "<VMTEMPLATE><ID>4</ID><NAME>talos-worker</NAME><TEMPLATE>\
            <CONTEXT><NETWORK><![CDATA[YES]]></NETWORK><TOKEN>YES</TOKEN>\
            <SSH_PUBLIC_KEY><![CDATA[$USER[SSH_PUBLIC_KEY]]]></SSH_PUBLIC_KEY>\
            <user_data>old</user_data></CONTEXT><CPU>2</CPU></TEMPLATE></VMTEMPLATE>";
        TemplateInfo::from_element(&xml::parse(doc).unwrap()).unwrap()
    }

    #[test]
    fn template_context_decodes_in_order() {
        let t = talos_template();
        assert_eq!((t.id, t.name.as_str()), (4, "talos-worker"));
        let keys: Vec<&str> = t.context.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(keys, ["NETWORK", "TOKEN", "SSH_PUBLIC_KEY", "user_data"]);
        assert_eq!(t.context[2].1, "$USER[SSH_PUBLIC_KEY]");
        assert_eq!((t.cpu, t.memory), (Amount::parse("2"), None));
    }

    #[test]
    fn merge_keeps_template_context_and_sets_user_data() {
        let t = talos_template();
        let extra = ExtraTemplate::with_user_data(&t.context, b"machine:\n  type: worker\n")
            .attribute("TALOSCOPE_CLUSTER", "healthy");
        let ctx = extra.context();
        assert_eq!(ctx.len(), 5, "{ctx:?}");
        assert_eq!(ctx[0], ("NETWORK".into(), "YES".into()));
        assert_eq!(ctx[1], ("TOKEN".into(), "YES".into()));
        // the template's own (differently cased) USER_DATA was replaced in place
        assert_eq!(ctx[3].0, "user_data");
        let decoded = base64::engine::general_purpose::STANDARD
            .decode(&ctx[3].1)
            .unwrap();
        assert_eq!(decoded, b"machine:\n  type: worker\n");
        assert_eq!(ctx[4], ("USER_DATA_ENCODING".into(), "base64".into()));
        let text = extra.render();
        assert!(text.starts_with("TALOSCOPE_CLUSTER=\"healthy\"\nCONTEXT=[\n  NETWORK=\"YES\",\n"));
        assert!(text.contains("  SSH_PUBLIC_KEY=\"$USER[SSH_PUBLIC_KEY]\",\n"));
        assert!(text.ends_with("  USER_DATA_ENCODING=\"base64\"\n]\n"));
        assert!(!format!("{extra:?}").contains(&ctx[3].1));
    }

    #[test]
    fn empty_template_context_gets_user_data_and_quotes_escape() {
        let extra = ExtraTemplate::with_user_data(&[], b"x").attribute("NOTE", "say \"hi\" \\o/");
        assert_eq!(
            extra.render(),
            "NOTE=\"say \\\"hi\\\" \\\\o/\"\nCONTEXT=[\n  USER_DATA=\"eA==\",\n  USER_DATA_ENCODING=\"base64\"\n]\n"
        );
    }

    #[test]
    fn pool_skips_entries_without_id() {
        let pool = xml::parse(
            "<VMTEMPLATE_POOL><VMTEMPLATE><ID>0</ID><NAME>a</NAME></VMTEMPLATE><VMTEMPLATE/></VMTEMPLATE_POOL>",
        )
        .unwrap();
        let ts = templates_from_pool(&pool);
        assert_eq!(ts.len(), 1);
        assert!(ts[0].context.is_empty());
    }
}
