/*
 * tc_shm.h: the shm engine for code outside it (TwoLevel's configuration,
 * the C tests): its layout and internals are in tc_shm_defs.h.
 */
#ifndef TC_SHM_H
#define TC_SHM_H

#include "tc_shm_defs.h"

#endif
