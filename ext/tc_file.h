/*
 * tc_file.h: the file engine for code outside it (TwoLevel's journal, the
 * C tests): its formats and internals are in tc_file_defs.h.
 */
#ifndef TC_FILE_H
#define TC_FILE_H

#include "tc_file_defs.h"

#endif
