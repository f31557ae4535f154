/* bcryptprimitives.dll for Wine 8, which lacks it.
 *
 * Rust's standard library (1.78 and later) draws its random bytes from ProcessPrng in
 * bcryptprimitives.dll; Wine 8 has no such DLL, so every Rust program fails to load
 * (status c0000135). This stand-in exports ProcessPrng and fills the buffer from
 * RtlGenRandom (SystemFunction036 in advapi32), which Wine does implement.
 * Used only by tests/windows/setup.sh to prepare the Wine prefix; never shipped. */
#include <windows.h>
#include <ntsecapi.h>

__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len)
{
    while (len > 0) {
        ULONG chunk = len > 0x10000000 ? 0x10000000 : (ULONG)len;
        if (!RtlGenRandom(data, chunk))
            return FALSE;
        data += chunk;
        len -= chunk;
    }
    return TRUE;
}
