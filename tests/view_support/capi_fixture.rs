//! The Cluster API objects of tests/fixtures/capi, read as one version, with the Machines'
//! nodes renamed to the view scenarios' control planes (cp-a/b/c → cp-1/2/3).
use taloscope::kube::{CapiObjects, CapiVersion};

/// The fixture's objects with only the Machines `keep` keeps.
pub fn capi_objects_keeping(
    version: CapiVersion,
    keep: impl Fn(&serde_json::Value) -> bool,
) -> CapiObjects {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/capi")
        .join(version.as_str());
    let texts: Vec<(&str, String)> = [
        "clusters",
        "machines",
        "machinedeployments",
        "machinesets",
        "taloscontrolplanes",
        "simmachines",
    ]
    .into_iter()
    .map(|r| {
        let text = std::fs::read_to_string(dir.join(format!("{r}.json"))).expect("fixture");
        // The Machines' nodes are the view scenarios' control planes.
        let text = text
            .replace("\"name\": \"cp-a\"", "\"name\": \"cp-1\"")
            .replace("\"name\": \"cp-b\"", "\"name\": \"cp-2\"")
            .replace("\"name\": \"cp-c\"", "\"name\": \"cp-3\"");
        if r != "machines" {
            return (r, text);
        }
        let mut list: serde_json::Value = serde_json::from_str(&text).expect("machines fixture");
        if let Some(items) = list["items"].as_array_mut() {
            items.retain(&keep);
        }
        (r, list.to_string())
    })
    .collect();
    let lists: Vec<(&str, &str)> = texts.iter().map(|(r, t)| (*r, t.as_str())).collect();
    CapiObjects::from_list_texts(version, &lists).expect("fixtures decode")
}
