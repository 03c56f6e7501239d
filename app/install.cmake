# `cmake --install` and the Debian package (CPack): the programs in lib/trainscope behind small
# launchers in bin/ that find LibTorch (app/launcher.sh.in: LibTorch is not in the package), the
# Python runner and the examples in share/trainscope, the desktop entry, icon and AppStream
# metainfo, man pages and bash/zsh completions generated from the programs' own --help
# (scripts/make-cli-docs.py, run at install time). Included from the top-level CMakeLists.txt.
include(GNUInstallDirs)
set(TRAINSCOPE_LIBEXEC "${CMAKE_INSTALL_LIBDIR}/trainscope")
get_filename_component(TRAINSCOPE_TORCH_LIB "${TORCH_INSTALL_PREFIX}/lib" ABSOLUTE)
string(REGEX MATCH "^[0-9]+\\.[0-9]+\\.[0-9]+" TRAINSCOPE_TORCH_VERSION "${Torch_VERSION}")

set(_ts_programs trainscope-cli)
if(TARGET trainscope)
    list(APPEND _ts_programs trainscope)
endif()
foreach(_ts_prog ${_ts_programs})
    # Installed, a program's RUNPATH is empty: no build folder, no /lib/intel64_win from Caffe2's
    # MKL paths; the launcher puts LibTorch on LD_LIBRARY_PATH.
    set_target_properties(${_ts_prog} PROPERTIES INSTALL_RPATH "" INSTALL_RPATH_USE_LINK_PATH OFF)
    install(TARGETS ${_ts_prog} RUNTIME DESTINATION ${TRAINSCOPE_LIBEXEC} COMPONENT trainscope)
    set(NAME ${_ts_prog})
    file(RELATIVE_PATH LIBEXEC_FROM_BIN "/prefix/${CMAKE_INSTALL_BINDIR}" "/prefix/${TRAINSCOPE_LIBEXEC}")
    set(BUILT_TORCH_LIB "${TRAINSCOPE_TORCH_LIB}")
    set(BUILT_PYTHON "${TRAINSCOPE_PYTHON}")
    set(TORCH_VERSION "${TRAINSCOPE_TORCH_VERSION}")
    configure_file(${CMAKE_CURRENT_LIST_DIR}/launcher.sh.in ${CMAKE_BINARY_DIR}/launchers/${_ts_prog} @ONLY)
    install(PROGRAMS ${CMAKE_BINARY_DIR}/launchers/${_ts_prog} DESTINATION ${CMAKE_INSTALL_BINDIR}
            COMPONENT trainscope)
endforeach()
# trainscope-setup-torch: PyTorch into a venv of the user's own, where the launchers look; the
# window's launcher shows trainscope-needs-libtorch (a Qt dialog that runs it) when started from
# the desktop menu with no LibTorch found.
set(TORCH_VERSION "${TRAINSCOPE_TORCH_VERSION}")
configure_file(${CMAKE_CURRENT_LIST_DIR}/setup-torch.sh.in ${CMAKE_BINARY_DIR}/launchers/trainscope-setup-torch @ONLY)
install(PROGRAMS ${CMAKE_BINARY_DIR}/launchers/trainscope-setup-torch DESTINATION ${CMAKE_INSTALL_BINDIR}
        COMPONENT trainscope)
if(TARGET trainscope-needs-libtorch)
    install(TARGETS trainscope-needs-libtorch RUNTIME DESTINATION ${TRAINSCOPE_LIBEXEC} COMPONENT trainscope)
endif()
install(FILES ${PROJECT_SOURCE_DIR}/resources/desktop/trainscope-setup-torch.1
        DESTINATION ${CMAKE_INSTALL_MANDIR}/man1 COMPONENT trainscope)
# What Debian wants of every package in /usr/share/doc: its copyright and changelog; the README
# and the labs' docs beside them with their pictures, as the programs' --help and the examples
# refer to docs/.
set(_ts_doc ${CMAKE_INSTALL_DATADIR}/doc/trainscope)
install(FILES ${PROJECT_SOURCE_DIR}/resources/desktop/copyright ${PROJECT_SOURCE_DIR}/README.md
        DESTINATION ${_ts_doc} COMPONENT trainscope)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs/ DESTINATION ${_ts_doc}/docs COMPONENT trainscope
        FILES_MATCHING PATTERN "*.md" PATTERN "*.png" PATTERN "*.svg")

install(DIRECTORY ${PROJECT_SOURCE_DIR}/runner/trainscope_runner DESTINATION ${CMAKE_INSTALL_DATADIR}/trainscope/runner
        COMPONENT trainscope PATTERN __pycache__ EXCLUDE)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/examples DESTINATION ${CMAKE_INSTALL_DATADIR}/trainscope
        COMPONENT trainscope PATTERN __pycache__ EXCLUDE)
if(TARGET trainscope)
    set(_ts_desktop ${PROJECT_SOURCE_DIR}/resources/desktop)
    install(FILES ${_ts_desktop}/org.trainscope.TrainScope.desktop DESTINATION ${CMAKE_INSTALL_DATADIR}/applications
            COMPONENT trainscope)
    install(FILES ${PROJECT_SOURCE_DIR}/resources/icons/trainscope.svg
            DESTINATION ${CMAKE_INSTALL_DATADIR}/icons/hicolor/scalable/apps RENAME org.trainscope.TrainScope.svg
            COMPONENT trainscope)
    configure_file(${_ts_desktop}/org.trainscope.TrainScope.metainfo.xml
                   ${CMAKE_BINARY_DIR}/org.trainscope.TrainScope.metainfo.xml @ONLY)
    install(FILES ${CMAKE_BINARY_DIR}/org.trainscope.TrainScope.metainfo.xml DESTINATION ${CMAKE_INSTALL_DATADIR}/metainfo
            COMPONENT trainscope)
endif()

# Man pages and completions from the built programs' --help, at install time (the build itself
# does not pay for them). $DESTDIR is honoured (CPack installs into a staging folder).
find_package(Python3 COMPONENTS Interpreter QUIET)
set(_ts_python "${Python3_EXECUTABLE}")
if(NOT _ts_python)
    set(_ts_python python3)
endif()
set(_ts_window_arg "")
if(TARGET trainscope)
    set(_ts_window_arg "--window \"$<TARGET_FILE:trainscope>\"")
endif()
install(CODE "
    set(_out \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_DATADIR}\")
    message(STATUS \"Man pages and completions: \${_out}\")
    execute_process(COMMAND \"${_ts_python}\" \"${PROJECT_SOURCE_DIR}/scripts/make-cli-docs.py\"
                    --cli \"$<TARGET_FILE:trainscope-cli>\" ${_ts_window_arg} --version ${PROJECT_VERSION}
                    --out \"\${_out}\" RESULT_VARIABLE _rc)
    if(NOT _rc EQUAL 0)
        message(FATAL_ERROR \"scripts/make-cli-docs.py failed (\${_rc})\")
    endif()
    # Debian's man pages and changelog are gzip-compressed (-n: no name or time, reproducible).
    file(GLOB _pages \"\${_out}/man/man1/*.1\")
    configure_file(\"${PROJECT_SOURCE_DIR}/resources/desktop/changelog\" \"\${_out}/doc/trainscope/changelog\" COPYONLY)
    foreach(_f \${_pages} \"\${_out}/doc/trainscope/changelog\")
        execute_process(COMMAND gzip -9nf \"\${_f}\" RESULT_VARIABLE _rc)
        if(NOT _rc EQUAL 0)
            message(FATAL_ERROR \"gzip \${_f} failed (\${_rc})\")
        endif()
    endforeach()
    " COMPONENT trainscope)

# A Debian package: `cpack -G DEB` in the build folder. Qt 6 and SQLite come from Debian;
# LibTorch 2.11 from PyPI (see the launcher).
set(CPACK_PACKAGE_NAME trainscope)
set(CPACK_PACKAGE_VENDOR "TrainScope")
set(CPACK_PACKAGE_CONTACT "TrainScope developers <developers@trainscope.org>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "See where the time and memory of a transformer training step go")
set(CPACK_PACKAGE_INSTALL_DIRECTORY trainscope)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION science)
set(CPACK_DEBIAN_COMPRESSION_TYPE gzip)
# CPack starts each line of the long description with the space Debian's format wants, and an
# empty line becomes Debian's paragraph break (" ."): none of that written here.
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION
    "A workbench (Qt 6 window and command line) for GPU experiments on
transformer training: end-to-end timing, kernel profiling, mixed precision,
memory, attention, torch.compile and distributed data parallel, with your own
model, attention and DDP classes on the same bench.

LibTorch is not part of this package: it needs PyTorch ${TRAINSCOPE_TORCH_VERSION} from PyPI.
trainscope-setup-torch installs it for your user (about 3 GB); the desktop
menu's TrainScope offers to. Or set TRAINSCOPE_PYTHON to a Python with that
torch, or TRAINSCOPE_LIBTORCH to its torch/lib folder.")
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_PACKAGE_DEPENDS
    "python3, python3-venv, libc6, libstdc++6, libsqlite3-0, libfmt9, libqt6core6 (>= 6.4), libqt6gui6 (>= 6.4), libqt6widgets6 (>= 6.4), libqt6charts6 (>= 6.4), libqt6svg6 (>= 6.4), libqt6printsupport6 (>= 6.4), libqt6opengl6 (>= 6.4), libqt6openglwidgets6 (>= 6.4), libqcustomplot2.1-qt6, qt6-qpa-plugins")
include(CPack)
