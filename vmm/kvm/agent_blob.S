/* Embeds the guest-agent flat binary into jinx-vmm. */
    .section .rodata
    .balign 16
    .globl jinx_agent_start, jinx_agent_end
jinx_agent_start:
    .incbin AGENT_BIN_PATH
jinx_agent_end:
    .section .note.GNU-stack,"",@progbits
