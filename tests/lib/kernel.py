"""What the running kernel offers, asked of the kernel itself."""
import ctypes


def landlock_abi():
    """The kernel's Landlock ABI version (landlock_create_ruleset with
    LANDLOCK_CREATE_RULESET_VERSION); -1 when Landlock is not there."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    return libc.syscall(444, None, ctypes.c_size_t(0), ctypes.c_uint32(1))
