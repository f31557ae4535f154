/* pdh.dll for running upstream's Windows kubelet under Wine 8 (tests/windows/upstream-kubelet.sh).
 *
 * The kubelet's Windows stats provider opens performance counters at start and exits when one
 * is missing; Wine 8's pdh.dll knows only a few processor and system counters, not the memory
 * and network ones the kubelet asks for. This stand-in accepts every counter path and reports
 * every counter as one instance "_Total" of value 0. The kubelet's CRI requests, which is what
 * it is run for, do not depend on these values. Loaded only by that script's Wine prefix,
 * with WINEDLLOVERRIDES=pdh=n; never shipped. */
#include <windows.h>
#include <string.h>

#define PDH_MORE_DATA 0x800007D2L
#define PDH_INVALID_ARGUMENT 0xC0000BBDL

typedef struct {
    DWORD CStatus;
    double doubleValue;
} FMT_DOUBLE;

typedef struct {
    LPWSTR szName;
    FMT_DOUBLE FmtValue;
} FMT_ITEM_DOUBLE;

static const WCHAR total[] = L"_Total";
/* Handles only need to be distinct and non-zero. */
static LONG next_handle = 0x100;

static LONG new_handle(HANDLE *out)
{
    if (!out)
        return PDH_INVALID_ARGUMENT;
    *out = (HANDLE)(ULONG_PTR)InterlockedIncrement(&next_handle);
    return ERROR_SUCCESS;
}

__declspec(dllexport) LONG WINAPI PdhOpenQuery(LPCWSTR source, DWORD_PTR user, HANDLE *query)
{
    (void)source; (void)user;
    return new_handle(query);
}

__declspec(dllexport) LONG WINAPI PdhAddCounterW(HANDLE query, LPCWSTR path, DWORD_PTR user,
                                                 HANDLE *counter)
{
    (void)query; (void)path; (void)user;
    return new_handle(counter);
}

__declspec(dllexport) LONG WINAPI PdhAddEnglishCounterW(HANDLE query, LPCWSTR path,
                                                        DWORD_PTR user, HANDLE *counter)
{
    return PdhAddCounterW(query, path, user, counter);
}

__declspec(dllexport) LONG WINAPI PdhCollectQueryData(HANDLE query)
{
    (void)query;
    return ERROR_SUCCESS;
}

__declspec(dllexport) LONG WINAPI PdhCloseQuery(HANDLE query)
{
    (void)query;
    return ERROR_SUCCESS;
}

__declspec(dllexport) LONG WINAPI PdhValidatePathW(LPCWSTR path)
{
    (void)path;
    return ERROR_SUCCESS;
}

__declspec(dllexport) LONG WINAPI PdhGetFormattedCounterValue(HANDLE counter, DWORD format,
                                                              DWORD *type, FMT_DOUBLE *value)
{
    (void)counter; (void)format;
    if (type)
        *type = 0;
    if (value)
        memset(value, 0, sizeof(*value));
    return ERROR_SUCCESS;
}

/* One item, "_Total" = 0; its name is stored right after the item, as Windows stores names
 * after the array. */
__declspec(dllexport) LONG WINAPI PdhGetFormattedCounterArrayW(HANDLE counter, DWORD format,
                                                               DWORD *size, DWORD *count,
                                                               FMT_ITEM_DOUBLE *items)
{
    DWORD needed = sizeof(FMT_ITEM_DOUBLE) + sizeof(total);
    (void)counter; (void)format;
    if (!size || !count)
        return PDH_INVALID_ARGUMENT;
    if (*size < needed || !items) {
        *size = needed;
        *count = 1;
        return PDH_MORE_DATA;
    }
    memset(items, 0, sizeof(*items));
    items->szName = (LPWSTR)(items + 1);
    memcpy(items + 1, total, sizeof(total));
    *size = needed;
    *count = 1;
    return ERROR_SUCCESS;
}
