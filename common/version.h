#ifndef WARD_VERSION_H
#define WARD_VERSION_H
#define WARD_VERSION "0.1.0"
#endif
