"""pyone (OpenNebula's own Python client) against the taloscope OpenNebula sim.

Usage: sim_pyone.py XMLRPC_URL ONE_AUTH_FILE TEMPLATE_NAME MACHINE_CONFIG_FILE
Exercises one.system.version, templatepool.info, template.instantiate, vm.info and vm.action
through pyone's generated bindings; exits non-zero with a message on any mismatch.
"""
import base64
import sys
import time

import pyone


def main():
    url, auth_file, template_name, config_file = sys.argv[1:5]
    with open(auth_file) as f:
        session = f.read().strip()
    one = pyone.OneServer(url, session=session)

    version = one.system.version()
    assert version.startswith("7"), version

    pool = one.templatepool.info(-2, -1, -1)
    by_name = {t.NAME: t for t in pool.VMTEMPLATE}
    assert template_name in by_name, sorted(by_name)
    template = by_name[template_name]
    assert template.TEMPLATE["TALOS_ROLE"] == "worker", template.TEMPLATE

    with open(config_file, "rb") as f:
        user_data = base64.b64encode(f.read()).decode()
    extra = {"CONTEXT": {"NETWORK": "YES", "USER_DATA": user_data,
                         "USER_DATA_ENCODING": "base64"}}
    vm_id = one.template.instantiate(template.ID, "py-w-1", False, extra)
    assert isinstance(vm_id, int), vm_id

    deadline = time.monotonic() + 20
    while True:
        vm = one.vm.info(vm_id)
        if vm.STATE == 3 and vm.LCM_STATE == 3:
            break
        assert time.monotonic() < deadline, (vm.STATE, vm.LCM_STATE)
        time.sleep(0.02)
    assert vm.NAME == "py-w-1", vm.NAME
    assert vm.TEMPLATE["CONTEXT"]["USER_DATA"] == user_data
    ip = vm.TEMPLATE["NIC"]["IP"]
    assert ip.startswith("127.10."), ip

    try:
        one.vm.info(987654)
        raise AssertionError("missing VM answered")
    except pyone.OneNoExistsException:
        pass
    try:
        pyone.OneServer(url, session="oneadmin:wrong").system.version()
        raise AssertionError("wrong password accepted")
    except pyone.OneAuthenticationException:
        pass

    assert one.vm.action("terminate", vm_id) == vm_id
    deadline = time.monotonic() + 20
    while one.vm.info(vm_id).STATE != 6:
        assert time.monotonic() < deadline, "VM never reached DONE"
        time.sleep(0.02)
    print("pyone ok", ip)


if __name__ == "__main__":
    main()
