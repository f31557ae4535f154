//! The machine facts on Windows, where upstream's kubelet reads them: the version and product
//! name from `HKLM\SOFTWARE\Microsoft\Windows NT\CurrentVersion` (the kernel version
//! `major.minor.build.revision`, the OS image, and the `node.kubernetes.io/windows-build`
//! label `major.minor.build` that pods' node selectors match their images' Windows build
//! against), the boot id from the memory manager's prefetch parameters, the system UUID from
//! the hardware configuration, the host name as the machine id, the memory size from
//! `GlobalMemoryStatusEx` (the memory the system can use, which is what `MemTotal` is on
//! Linux), and the logical processors from `GetActiveProcessorCount` over every processor
//! group.

use std::collections::BTreeMap;
use std::io;

use sergeant_core::spec::{NodeOs, SpecError};
use windows_sys::Win32::Foundation::ERROR_SUCCESS;
use windows_sys::Win32::System::Registry::{
    RegGetValueW, HKEY_LOCAL_MACHINE, RRF_RT_REG_DWORD, RRF_RT_REG_SZ,
};
use windows_sys::Win32::System::SystemInformation::{
    ComputerNamePhysicalDnsHostname, GetComputerNameExW, GlobalMemoryStatusEx, MEMORYSTATUSEX,
};
use windows_sys::Win32::System::Threading::{GetActiveProcessorCount, ALL_PROCESSOR_GROUPS};

use super::{Identity, MachineError};

/// The key that says which Windows this is.
const CURRENT_VERSION: &str = r"SOFTWARE\Microsoft\Windows NT\CurrentVersion";
/// The key whose `BootId` counts the machine's boots.
const PREFETCH: &str =
    r"SYSTEM\CurrentControlSet\Control\Session Manager\Memory Management\PrefetchParameters";
/// The key whose `LastConfig` names the hardware configuration (the system UUID).
const HARDWARE_CONFIG: &str = r"SYSTEM\HardwareConfig";
/// The label of the Windows build, as upstream names it.
const WINDOWS_BUILD_LABEL: &str = "node.kubernetes.io/windows-build";
/// The longest registry string read, in UTF-16 units (product names and build numbers are
/// short; a longer value is refused rather than read in part).
const MAX_STRING: usize = 512;

/// Who this machine is and what it runs.
pub(super) fn identity() -> Result<Identity, MachineError> {
    let major = dword(CURRENT_VERSION, "CurrentMajorVersionNumber")?;
    let minor = dword(CURRENT_VERSION, "CurrentMinorVersionNumber")?;
    let build = string(CURRENT_VERSION, "CurrentBuildNumber")?;
    let revision = dword(CURRENT_VERSION, "UBR")?;
    let system_uuid = string(HARDWARE_CONFIG, "LastConfig")
        .map(|config| system_uuid(&config))
        .unwrap_or_default();
    Ok(Identity {
        os: NodeOs::Windows,
        os_labels: BTreeMap::from([(
            WINDOWS_BUILD_LABEL.to_owned(),
            format!("{major}.{minor}.{build}"),
        )]),
        machine_id: host_name().map_err(|reason| MachineError::SystemCall {
            call: "GetComputerNameExW",
            reason,
        })?,
        system_uuid,
        boot_id: dword(PREFETCH, "BootId")?.to_string(),
        kernel_version: format!("{major}.{minor}.{build}.{revision}"),
        os_image: string(CURRENT_VERSION, "ProductName")?,
    })
}

/// The memory the system can use, `GlobalMemoryStatusEx`'s total physical memory, in bytes.
///
/// # Errors
///
/// [`SpecError::Node`] when the system does not answer.
pub fn memory_capacity() -> Result<u64, SpecError> {
    let mut status = MEMORYSTATUSEX {
        dwLength: u32::try_from(std::mem::size_of::<MEMORYSTATUSEX>()).unwrap_or(u32::MAX),
        dwMemoryLoad: 0,
        ullTotalPhys: 0,
        ullAvailPhys: 0,
        ullTotalPageFile: 0,
        ullAvailPageFile: 0,
        ullTotalVirtual: 0,
        ullAvailVirtual: 0,
        ullAvailExtendedVirtual: 0,
    };
    // SAFETY: `status` is a live MEMORYSTATUSEX whose dwLength is its size, as the call wants.
    if unsafe { GlobalMemoryStatusEx(&mut status) } == 0 {
        return Err(SpecError::Node {
            reason: format!("GlobalMemoryStatusEx: {}", io::Error::last_os_error()),
        });
    }
    Ok(status.ullTotalPhys)
}

/// The machine's active logical processors in all its processor groups: the Node's cpu
/// capacity. (Rust's standard library counts those of the process's group only, at most 64.)
///
/// # Errors
///
/// [`MachineError::SystemCall`] when the system does not answer.
pub fn logical_cpus() -> Result<u32, MachineError> {
    // SAFETY: the call takes a group number by value and touches no memory of ours.
    match unsafe { GetActiveProcessorCount(ALL_PROCESSOR_GROUPS) } {
        0 => Err(MachineError::SystemCall {
            call: "GetActiveProcessorCount",
            reason: io::Error::last_os_error(),
        }),
        count => Ok(count),
    }
}

/// The hardware configuration id as a UUID, as upstream reports it: without its braces, in
/// capitals.
fn system_uuid(config: &str) -> String {
    config
        .trim_start_matches('{')
        .trim_end_matches('}')
        .to_uppercase()
}

/// The machine's DNS host name.
fn host_name() -> io::Result<String> {
    let mut buffer = [0u16; MAX_STRING];
    let mut len = u32::try_from(buffer.len()).unwrap_or(u32::MAX);
    // SAFETY: `buffer` holds `len` UTF-16 units and outlives the call; `len` is live.
    let ok = unsafe {
        GetComputerNameExW(
            ComputerNamePhysicalDnsHostname,
            buffer.as_mut_ptr(),
            &mut len,
        )
    };
    if ok == 0 {
        return Err(io::Error::last_os_error());
    }
    let written = buffer.get(..len as usize).unwrap_or(&buffer);
    Ok(String::from_utf16_lossy(written))
}

/// A `REG_DWORD` value under `HKEY_LOCAL_MACHINE\key`.
fn dword(key: &'static str, value: &'static str) -> Result<u32, MachineError> {
    let mut data = 0u32;
    let mut size = 4u32;
    get_value(
        key,
        value,
        RRF_RT_REG_DWORD,
        (&raw mut data).cast(),
        &mut size,
    )?;
    Ok(data)
}

/// A `REG_SZ` value under `HKEY_LOCAL_MACHINE\key`, without its terminating NUL.
fn string(key: &'static str, value: &'static str) -> Result<String, MachineError> {
    let mut data = [0u16; MAX_STRING];
    let mut size = u32::try_from(std::mem::size_of_val(&data)).unwrap_or(u32::MAX);
    get_value(
        key,
        value,
        RRF_RT_REG_SZ,
        data.as_mut_ptr().cast(),
        &mut size,
    )?;
    let units = (size as usize / 2).min(data.len());
    let text = data.get(..units).unwrap_or(&data);
    let text = text.split(|&unit| unit == 0).next().unwrap_or(text);
    Ok(String::from_utf16_lossy(text))
}

/// Reads `value` of `HKEY_LOCAL_MACHINE\key` of the type `flags` allows into `size` bytes at
/// `data` (`size` becomes the bytes written).
fn get_value(
    key: &'static str,
    value: &'static str,
    flags: u32,
    data: *mut core::ffi::c_void,
    size: &mut u32,
) -> Result<(), MachineError> {
    let wide = |text: &str| text.encode_utf16().chain(Some(0)).collect::<Vec<u16>>();
    let (key_w, value_w) = (wide(key), wide(value));
    // SAFETY: both names are NUL-terminated UTF-16 that outlive the call; `data` points to
    // `*size` writable bytes (the callers' buffers) and `size` is live.
    let status = unsafe {
        RegGetValueW(
            HKEY_LOCAL_MACHINE,
            key_w.as_ptr(),
            value_w.as_ptr(),
            flags,
            std::ptr::null_mut(),
            data,
            size,
        )
    };
    if status == ERROR_SUCCESS {
        return Ok(());
    }
    Err(MachineError::Registry {
        key,
        value,
        reason: io::Error::from_raw_os_error(i32::try_from(status).unwrap_or(i32::MAX)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_system_uuid_loses_its_braces_and_is_in_capitals() {
        assert_eq!(
            system_uuid("{4c4c4544-0044-3010-8052-b4c04f4e4d32}"),
            "4C4C4544-0044-3010-8052-B4C04F4E4D32"
        );
    }
}
