// The official NATS C client, as the forwarder uses it.
#include <nats/nats.h>
