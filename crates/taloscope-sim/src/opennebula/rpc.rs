//! oned's XML-RPC methods in the sim: session check, then `one.system.version`,
//! `one.templatepool.info`, `one.template.info`, `one.template.instantiate`, `one.vm.info`,
//! `one.vmpool.info`, `one.vm.action`, `one.user.info` and `one.group.info`, each answered in
//! oned's words and error codes.
use std::sync::Arc;

use super::cloud::{OneCloud, Refusal};
use super::vm::{VmState, in_range};
use super::xmlrpc::{self, ErrorCode, MethodCall};

/// The version the sim reports.
pub(crate) const ONE_VERSION: &str = "7.0.0";

const METHODS: [&str; 9] = [
    "one.system.version",
    "one.templatepool.info",
    "one.template.info",
    "one.template.instantiate",
    "one.vm.info",
    "one.vmpool.info",
    "one.vm.action",
    "one.user.info",
    "one.group.info",
];

const VM_ACTIONS: [&str; 15] = [
    "terminate",
    "terminate-hard",
    "undeploy",
    "undeploy-hard",
    "poweroff",
    "poweroff-hard",
    "reboot",
    "reboot-hard",
    "hold",
    "release",
    "stop",
    "suspend",
    "resume",
    "resched",
    "unresched",
];

/// Answers one `methodCall` body with a `methodResponse` document.
pub(crate) fn answer(cloud: &Arc<OneCloud>, body: &str) -> String {
    let call = match xmlrpc::parse_call(body) {
        Ok(call) => call,
        Err(e) => return xmlrpc::fault(-32700, &format!("parse error: {e}")),
    };
    let method = call.method.as_str();
    if !METHODS.contains(&method) {
        return xmlrpc::fault(-506, &format!("Method '{method}' not defined"));
    }
    if !authenticated(cloud, &call) {
        return xmlrpc::failure(
            &format!("[{method}] User couldn't be authenticated, aborting call."),
            ErrorCode::Authentication,
            -1,
        );
    }
    match dispatch(cloud, &call) {
        Ok(response) => response,
        Err(Bad::Param(i, want)) => {
            xmlrpc::fault(-501, &format!("[{method}] parameter {i} must be {want}"))
        }
        Err(Bad::Refused(refusal, id)) => refused(method, &refusal, id),
    }
}

enum Bad {
    Param(usize, &'static str),
    Refused(Refusal, i64),
}

fn authenticated(cloud: &OneCloud, call: &MethodCall) -> bool {
    let Some((user, password)) = call.string(0).and_then(|s| s.split_once(':')) else {
        return false;
    };
    let c = cloud.lock();
    user == c.owner.uname && password == c.password
}

fn int(call: &MethodCall, i: usize) -> Result<i64, Bad> {
    call.int(i).ok_or(Bad::Param(i, "an integer"))
}

fn dispatch(cloud: &Arc<OneCloud>, call: &MethodCall) -> Result<String, Bad> {
    match call.method.as_str() {
        "one.system.version" => Ok(xmlrpc::success_string(ONE_VERSION)),
        "one.templatepool.info" => {
            let (filter, start, end) = (int(call, 1)?, int(call, 2)?, int(call, 3)?);
            let c = cloud.lock();
            let owned = owner_matches(filter);
            let ids = in_range(c.templates.iter().map(|t| t.id), start, end);
            let mut out = String::from("<VMTEMPLATE_POOL>");
            for t in c.templates.iter().filter(|t| owned && ids.contains(&t.id)) {
                out.push_str(&t.to_xml(&c.owner));
            }
            out.push_str("</VMTEMPLATE_POOL>");
            Ok(xmlrpc::success_string(&out))
        }
        "one.template.info" => {
            let id = int(call, 1)?;
            let c = cloud.lock();
            let t = c
                .templates
                .iter()
                .find(|t| t.id == id)
                .ok_or(Bad::Refused(Refusal::NoTemplate(id), id))?;
            Ok(xmlrpc::success_string(&t.to_xml(&c.owner)))
        }
        "one.template.instantiate" => {
            let id = int(call, 1)?;
            let name = call.string(2).unwrap_or_default();
            let hold = call.bool(3).unwrap_or(false);
            let extra = call.string(4).unwrap_or_default();
            let vm = cloud
                .instantiate(id, name, hold, extra)
                .map_err(|r| Bad::Refused(r, id))?;
            Ok(xmlrpc::success_int(vm))
        }
        "one.vm.info" => {
            let id = int(call, 1)?;
            let c = cloud.lock();
            let vm = c.vms.get(&id).ok_or(Bad::Refused(Refusal::NoVm(id), id))?;
            Ok(xmlrpc::success_string(&vm.to_xml()))
        }
        "one.vmpool.info" => {
            let (filter, start, end) = (int(call, 1)?, int(call, 2)?, int(call, 3)?);
            let state = call.int(4).unwrap_or(-1);
            if !(-2..=11).contains(&state) || state == 7 {
                return Ok(xmlrpc::failure(
                    "[one.vmpool.info] Incorrect filter_flag, state",
                    ErrorCode::RpcApi,
                    -1,
                ));
            }
            let c = cloud.lock();
            let owned = owner_matches(filter);
            let ids = in_range(c.vms.keys().copied(), start, end);
            let mut out = String::from("<VM_POOL>");
            for vm in c.vms.values().filter(|v| owned && ids.contains(&v.id)) {
                let keep = match state {
                    -2 => true,
                    -1 => vm.state != VmState::Done,
                    s => vm.state as i64 == s,
                };
                if keep {
                    out.push_str(&vm.to_xml());
                }
            }
            out.push_str("</VM_POOL>");
            Ok(xmlrpc::success_string(&out))
        }
        "one.vm.action" => {
            let action = call.string(1).ok_or(Bad::Param(1, "a string"))?;
            let id = int(call, 2)?;
            if !VM_ACTIONS.contains(&action) {
                return Err(Bad::Refused(Refusal::UnknownAction(action.to_string()), id));
            }
            let vm = cloud.action(action, id).map_err(|r| Bad::Refused(r, id))?;
            Ok(xmlrpc::success_int(vm))
        }
        // Id -1 is the caller's own user or group (src/rm/api/SharedAPI.cc `info`); the sim
        // has one of each.
        "one.user.info" => {
            let id = int(call, 1)?;
            let c = cloud.lock();
            if id != -1 && id != c.owner.uid {
                return Err(Bad::Refused(Refusal::NoObject("user", id), id));
            }
            Ok(xmlrpc::success_string(&super::quota::user_xml(&c)))
        }
        "one.group.info" => {
            let id = int(call, 1)?;
            let c = cloud.lock();
            if id != -1 && id != c.owner.gid {
                return Err(Bad::Refused(Refusal::NoObject("group", id), id));
            }
            Ok(xmlrpc::success_string(&super::quota::group_xml(&c)))
        }
        other => Ok(xmlrpc::fault(
            -506,
            &format!("Method '{other}' not defined"),
        )),
    }
}

/// Everything in the sim belongs to the one user: `-4`…`-1` and uid 0 see it all.
fn owner_matches(filter: i64) -> bool {
    (-4..=0).contains(&filter)
}

fn refused(method: &str, refusal: &Refusal, id: i64) -> String {
    let (message, code) = match refusal {
        Refusal::NoTemplate(t) => (
            format!("[{method}] Error getting VM template [{t}]."),
            ErrorCode::NoExists,
        ),
        Refusal::NoVm(v) => (
            format!("[{method}] Error getting virtual machine [{v}]."),
            ErrorCode::NoExists,
        ),
        Refusal::NotAvailable { action, state } => (
            format!(
                "[{method}] Error performing action \"{action}\" on virtual machine [{id}]. This action is not available for state {state}"
            ),
            ErrorCode::Action,
        ),
        Refusal::Unsupported(action) => (
            format!(
                "[{method}] Error performing action \"{action}\" on virtual machine [{id}]. The taloscope sim does not model this action"
            ),
            ErrorCode::Action,
        ),
        Refusal::UnknownAction(action) => (
            format!("[{method}] Invalid action \"{action}\""),
            ErrorCode::RpcApi,
        ),
        Refusal::NoObject(what, id) => (
            format!("[{method}] Error getting {what} [{id}]."),
            ErrorCode::NoExists,
        ),
        // Request.cc `failure_message` for AUTHORIZATION around SharedAPI.cc's
        // "user [uid] " + Quota.cc's words.
        Refusal::Quota { uid, message } => (
            format!("[{method}] User [{uid}] : {message}."),
            ErrorCode::Authorization,
        ),
        Refusal::BadTemplate(e) => (
            format!("[{method}] Error parsing the extra template: {e}"),
            ErrorCode::Internal,
        ),
    };
    xmlrpc::failure(&message, code, id)
}
