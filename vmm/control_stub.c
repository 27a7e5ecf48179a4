/* Placeholder until the control socket lands (control.c): events go nowhere. */
#include "control.h"
void control_event(struct control *c, const char *json)
{
    (void)c;
    (void)json;
}
