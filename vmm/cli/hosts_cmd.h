/* `jinx hosts baseline [--uri URI] [--json] HOST.xml...`: the richest libvirt CPU model
 * every listed host can present, for --cpu-model in campaigns over a fleet (dumps then
 * replay on any of them). Each file is a host's CPU: `virsh capabilities` output or its
 * <cpu> element (`virsh domcapabilities` host-model works too). libvirt's in-process test
 * driver computes it (no daemon); --uri names another libvirt connection. */
#ifndef JINX_HOSTS_CMD_H
#define JINX_HOSTS_CMD_H

int cmd_hosts(int argc, char **argv);

#endif
