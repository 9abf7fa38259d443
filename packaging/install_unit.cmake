# Installs systemd/tidemark.service (TIDEMARK_UNIT_SOURCE) with ExecStart,
# ExecStartPre and Documentation naming the binary and the docs where this
# install puts them (TIDEMARK_BINDIR, TIDEMARK_DOCDIR under the prefix), into
# /lib/systemd/system for the /usr prefix (the Debian package) or
# PREFIX/lib/systemd/system otherwise, both on systemd's unit search path.
# Runs at install time, so the prefix is the one given to `cmake --install`
# or cpack, not the one configured.
if(CMAKE_INSTALL_PREFIX STREQUAL "/usr")
  set(unit_dir "/lib/systemd/system")
else()
  set(unit_dir "${CMAKE_INSTALL_PREFIX}/lib/systemd/system")
endif()
file(READ "${TIDEMARK_UNIT_SOURCE}" unit)
string(REPLACE "/usr/bin/tidemark " "${CMAKE_INSTALL_PREFIX}/${TIDEMARK_BINDIR}/tidemark " unit "${unit}")
string(REPLACE "file:///usr/share/doc/tidemark/" "file://${CMAKE_INSTALL_PREFIX}/${TIDEMARK_DOCDIR}/" unit "${unit}")
set(unit_path "$ENV{DESTDIR}${unit_dir}/tidemark.service")
message(STATUS "Installing: ${unit_path}")
file(WRITE "${unit_path}" "${unit}")
list(APPEND CMAKE_INSTALL_MANIFEST_FILES "${unit_dir}/tidemark.service")
