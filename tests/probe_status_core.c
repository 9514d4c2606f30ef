/* For test_probe: the status and WDL codes as core/ defines them, compiled in a unit that sees
 * only core's headers (test_probe.c sees probe/dtb.h's copies), so that the two definitions can
 * be compared value by value. */
#include "position.h"
#include "value.h"

const int dtb_test_core_codes[] = {
    DTB_OK,         DTB_E_INVALID, DTB_E_RANGE,    DTB_E_OVERFLOW, DTB_E_NOTFOUND,
    DTB_E_IO,       DTB_E_NOSPACE, DTB_E_CORRUPT,  DTB_E_VERSION,  DTB_E_MISMATCH,
    DTB_E_NOMEM,    DTB_E_ABORTED, DTB_E_NOTCACHED, DTB_LOSS,      DTB_DRAW,
    DTB_WIN,
};
const int dtb_test_core_ncodes = (int)(sizeof dtb_test_core_codes / sizeof dtb_test_core_codes[0]);
const int dtb_test_core_status_size = (int)sizeof(dtb_status);
