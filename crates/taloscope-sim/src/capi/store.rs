//! The management cluster's object store: every CAPI and provider object as JSON in its storage
//! version, with the metadata the API server owns (uid, resourceVersion, generation,
//! creationTimestamp, deletionTimestamp), and a change counter the controller wakes on.
use std::collections::BTreeMap;
use std::sync::{Mutex, MutexGuard};

use serde_json::{Value, json};
use tokio::sync::watch;

use crate::kube_api::objects::rfc3339;

/// (plural, namespace, name).
pub(crate) type Key = (String, String, String);

/// What a write can run into.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum StoreError {
    AlreadyExists(String),
    NotFound(String),
    Invalid(String),
}

/// Every object of the management cluster.
pub(crate) struct CapiStore {
    objects: Mutex<BTreeMap<Key, Value>>,
    resource_version: Mutex<u64>,
    /// Bumped on every write.
    pub changes: watch::Sender<u64>,
    /// The custom resources served.
    pub installed: super::resources::Installed,
    /// Every request an admission webhook refused, oldest first.
    refusals: Mutex<Vec<super::admission::AdmissionRefusal>>,
}

/// A stable uid for an object name (uuid-shaped).
pub(crate) fn uid_of(name: &str) -> String {
    crate::kube_api::objects::uid("capi", name)
}

pub(crate) use crate::model::clock::now_unix;

fn has_finalizers(obj: &Value) -> bool {
    obj["metadata"]["finalizers"]
        .as_array()
        .is_some_and(|f| !f.is_empty())
}

fn key_of(plural: &str, obj: &Value) -> Option<Key> {
    Some((
        plural.to_string(),
        obj["metadata"]["namespace"].as_str()?.to_string(),
        obj["metadata"]["name"].as_str()?.to_string(),
    ))
}

pub(crate) use crate::model::capi_scenarios::random_suffix;

impl CapiStore {
    /// A store serving the `installed` resources.
    pub fn serving(installed: super::resources::Installed) -> CapiStore {
        CapiStore {
            installed,
            objects: Mutex::new(BTreeMap::new()),
            resource_version: Mutex::new(100),
            changes: watch::channel(0).0,
            refusals: Mutex::new(Vec::new()),
        }
    }

    /// Logs a request an admission webhook refused.
    pub fn refused(&self, refusal: super::admission::AdmissionRefusal) {
        self.refusals
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(refusal);
    }

    /// Every refused request so far.
    pub fn refusals(&self) -> Vec<super::admission::AdmissionRefusal> {
        self.refusals
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    fn lock(&self) -> MutexGuard<'_, BTreeMap<Key, Value>> {
        self.objects.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn next_rv(&self) -> String {
        let mut rv = self
            .resource_version
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        *rv += 1;
        rv.to_string()
    }

    pub fn resource_version(&self) -> u64 {
        *self
            .resource_version
            .lock()
            .unwrap_or_else(|e| e.into_inner())
    }

    fn changed(&self) {
        self.changes.send_modify(|c| *c += 1);
    }

    pub fn get(&self, plural: &str, namespace: &str, name: &str) -> Option<Value> {
        let key = (plural.to_string(), namespace.to_string(), name.to_string());
        self.lock().get(&key).cloned()
    }

    /// Every object of `plural`, in `namespace` or all of them, ordered by namespace and name.
    pub fn list(&self, plural: &str, namespace: Option<&str>) -> Vec<Value> {
        self.lock()
            .iter()
            .filter(|((p, ns, _), _)| p == plural && namespace.is_none_or(|n| n == ns))
            .map(|(_, v)| v.clone())
            .collect()
    }

    /// Stores a new object: `metadata.generateName` gets a random suffix, and the server-owned
    /// metadata is filled in.
    pub fn create(&self, plural: &str, mut obj: Value) -> Result<Value, StoreError> {
        if obj["metadata"]["name"].as_str().is_none_or(str::is_empty) {
            let Some(prefix) = obj["metadata"]["generateName"].as_str().map(String::from) else {
                return Err(StoreError::Invalid(
                    "metadata.name or metadata.generateName is required".into(),
                ));
            };
            obj["metadata"]["name"] = json!(format!(
                "{prefix}{}",
                random_suffix(crate::model::clock::random_u64())
            ));
        }
        if obj["metadata"]["namespace"].as_str().is_none() {
            obj["metadata"]["namespace"] = json!("default");
        }
        let key = key_of(plural, &obj).ok_or_else(|| StoreError::Invalid("no name".into()))?;
        let mut all = self.lock();
        if all.contains_key(&key) {
            return Err(StoreError::AlreadyExists(key.2));
        }
        let meta = &mut obj["metadata"];
        meta["uid"] = json!(uid_of(&format!("{}/{}/{}", key.0, key.1, key.2)));
        meta["generation"] = json!(1);
        // kubernetes staging/src/k8s.io/apiserver/pkg/registry/rest/meta.go
        // `FillObjectMetaSystemFields`: the server sets the creation time (metav1.Time, RFC 3339
        // in whole seconds) and the uid on create, whatever the client sent.
        meta["creationTimestamp"] = json!(rfc3339(now_unix()));
        meta["resourceVersion"] = json!(self.next_rv());
        if let Some(m) = meta.as_object_mut() {
            m.remove("generateName");
        }
        all.insert(key, obj.clone());
        drop(all);
        self.changed();
        Ok(obj)
    }

    /// Replaces a stored object; `metadata.generation` goes up when the spec changed.
    pub fn replace(&self, plural: &str, mut obj: Value) -> Result<Value, StoreError> {
        let key = key_of(plural, &obj).ok_or_else(|| StoreError::Invalid("no name".into()))?;
        let mut all = self.lock();
        let Some(old) = all.get(&key) else {
            return Err(StoreError::NotFound(key.2));
        };
        let generation = old["metadata"]["generation"].as_i64().unwrap_or(1);
        let generation = if old["spec"] != obj["spec"] {
            generation + 1
        } else {
            generation
        };
        // rest/update.go `BeforeUpdate`: an update keeps the stored uid and creation time, and
        // a deletion once requested stays requested.
        for field in ["uid", "creationTimestamp", "deletionTimestamp"] {
            obj["metadata"][field] = old["metadata"][field].clone();
        }
        if let Some(m) = obj["metadata"].as_object_mut() {
            m.retain(|_, v| !v.is_null());
        }
        // registry/generic/registry/store.go `Update`: an object being deleted goes once an
        // update leaves it without finalizers.
        if !obj["metadata"]["deletionTimestamp"].is_null() && !has_finalizers(&obj) {
            all.remove(&key);
            drop(all);
            self.next_rv();
            self.changed();
            return Ok(obj);
        }
        obj["metadata"]["generation"] = json!(generation);
        obj["metadata"]["resourceVersion"] = json!(self.next_rv());
        if obj == *old {
            return Ok(obj);
        }
        all.insert(key, obj.clone());
        drop(all);
        self.changed();
        Ok(obj)
    }

    /// Changes a stored object in place (the controller's writes); false if it is gone.
    pub fn modify(&self, plural: &str, ns: &str, name: &str, f: impl FnOnce(&mut Value)) -> bool {
        let Some(mut obj) = self.get(plural, ns, name) else {
            return false;
        };
        let before = obj.clone();
        f(&mut obj);
        if obj != before {
            let _ = self.replace(plural, obj);
        }
        true
    }

    /// A DELETE as registry/generic/registry/store.go `Delete` answers it: an object with
    /// finalizers stays, its `deletionTimestamp` set, until the controllers holding them let go
    /// (an update removing the last one removes it); one without goes at once. The object as it
    /// was left, or as it was when it went.
    pub fn request_deletion(&self, plural: &str, namespace: &str, name: &str) -> Option<Value> {
        let key = (plural.to_string(), namespace.to_string(), name.to_string());
        let mut all = self.lock();
        let current = all.get_mut(&key)?;
        if !has_finalizers(current) {
            drop(all);
            return self.delete(plural, namespace, name);
        }
        if current["metadata"]["deletionTimestamp"].is_null() {
            current["metadata"]["deletionTimestamp"] = json!(rfc3339(now_unix()));
            current["metadata"]["deletionGracePeriodSeconds"] = json!(0);
            let rv = self.next_rv();
            let current = all.get_mut(&key)?;
            current["metadata"]["resourceVersion"] = json!(rv);
            let kept = current.clone();
            drop(all);
            self.changed();
            return Some(kept);
        }
        Some(current.clone())
    }

    /// Removes an object at once, finalizers or not (an object no controller holds).
    pub fn delete(&self, plural: &str, namespace: &str, name: &str) -> Option<Value> {
        let key = (plural.to_string(), namespace.to_string(), name.to_string());
        let gone = self.lock().remove(&key);
        if gone.is_some() {
            self.next_rv();
            self.changed();
        }
        gone
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn create_fills_metadata_and_replace_bumps_generation_on_spec_changes() {
        let store = CapiStore::serving(super::super::resources::Installed::default());
        let made = store
            .create(
                "machines",
                json!({"metadata": {"generateName": "w-"}, "spec": {"a": 1}}),
            )
            .expect("created");
        let name = made["metadata"]["name"].as_str().expect("name").to_string();
        assert!(name.starts_with("w-") && name.len() == 7, "{name}");
        assert_eq!(made["metadata"]["namespace"], "default");
        let mut changed = made.clone();
        changed["spec"]["a"] = json!(2);
        let after = store.replace("machines", changed).expect("replaced");
        assert_eq!(after["metadata"]["generation"], 2);
        assert!(store.create("machines", after).is_err());
        assert!(store.delete("machines", "default", &name).is_some());
        assert!(store.list("machines", None).is_empty());
    }

    /// registry/generic/registry/store.go: a finalizer holds a deleted object, its deletion
    /// stays asked for through updates, and the update dropping the last finalizer removes it.
    #[test]
    fn a_finalizer_holds_a_deleted_object_until_an_update_drops_it() {
        let store = CapiStore::serving(super::super::resources::Installed::default());
        let held = json!({"metadata": {"name": "m", "finalizers": ["x"]}, "spec": {}});
        store.create("machines", held).expect("created");
        store
            .create(
                "machines",
                json!({"metadata": {"name": "free"}, "spec": {}}),
            )
            .expect("created");
        let left = store
            .request_deletion("machines", "default", "m")
            .expect("there");
        assert!(left["metadata"]["deletionTimestamp"].is_string(), "{left}");
        let mut cleared = store.get("machines", "default", "m").expect("kept");
        cleared["metadata"]["deletionTimestamp"] = Value::Null;
        store.replace("machines", cleared).expect("replaced");
        let kept = store.get("machines", "default", "m").expect("kept");
        assert!(kept["metadata"]["deletionTimestamp"].is_string(), "{kept}");
        assert!(store.modify("machines", "default", "m", |m| {
            m["metadata"]["finalizers"] = json!([]);
        }));
        assert!(store.get("machines", "default", "m").is_none());
        store.request_deletion("machines", "default", "free");
        assert!(store.get("machines", "default", "free").is_none());
    }
}
