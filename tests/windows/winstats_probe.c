/* What Windows' own calls say about this machine, for tests/windows/stats.sh to check
 * sergeant.exe's /stats/summary against: one JSON line with the CPU time every processor spent
 * busy (GetSystemTimes: kernel + user - idle, in nanoseconds), the physical memory
 * (GlobalMemoryStatusEx), the commit charge and limit (GetPerformanceInfo, in bytes) and the
 * sum of the processes' private working sets (NtQuerySystemInformation's process list). Built
 * by that script with the mingw-w64 compiler and run under Wine; never shipped. */
#include <windows.h>
#include <psapi.h>
#include <stdio.h>
#include <stdlib.h>

typedef LONG(WINAPI *query_fn)(ULONG, PVOID, ULONG, PULONG);

static ULONGLONG units(FILETIME t) { return ((ULONGLONG)t.dwHighDateTime << 32) | t.dwLowDateTime; }

/* The sum of WorkingSetPrivateSize (8 bytes into each SYSTEM_PROCESS_INFORMATION record). */
static int private_working_set(ULONGLONG *sum)
{
    query_fn query = (query_fn)GetProcAddress(GetModuleHandleA("ntdll.dll"), "NtQuerySystemInformation");
    ULONG size = 1 << 20, needed = 0;
    unsigned char *list = NULL;
    LONG status;
    if (!query)
        return 0;
    for (;;) {
        list = realloc(list, size);
        status = query(5 /* SystemProcessInformation */, list, size, &needed);
        if (status != (LONG)0xC0000004L /* STATUS_INFO_LENGTH_MISMATCH */)
            break;
        size *= 2;
    }
    if (status < 0)
        return 0;
    *sum = 0;
    for (unsigned char *record = list;; ) {
        ULONG next = *(ULONG *)record;
        *sum += (ULONGLONG)*(LONGLONG *)(record + 8);
        if (!next)
            break;
        record += next;
    }
    free(list);
    return 1;
}

int main(void)
{
    FILETIME idle, kernel, user;
    MEMORYSTATUSEX memory = {.dwLength = sizeof(memory)};
    PERFORMANCE_INFORMATION perf = {.cb = sizeof(perf)};
    ULONGLONG private_ws = 0;
    if (!GetSystemTimes(&idle, &kernel, &user) || !GlobalMemoryStatusEx(&memory) ||
        !GetPerformanceInfo(&perf, sizeof(perf)) || !private_working_set(&private_ws)) {
        fprintf(stderr, "winstats_probe: a call failed: %lu\n", GetLastError());
        return 1;
    }
    printf("{\"busy_core_nanos\": %llu, \"total_phys\": %llu, \"commit_total\": %llu, "
           "\"commit_limit\": %llu, \"private_working_set\": %llu}\n",
           (units(kernel) + units(user) - units(idle)) * 100, memory.ullTotalPhys,
           (ULONGLONG)perf.CommitTotal * perf.PageSize, (ULONGLONG)perf.CommitLimit * perf.PageSize,
           private_ws);
    return 0;
}
