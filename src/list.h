/*
 * list.h -- the doubly linked lists whose nodes link through fields next and prev (NULL at both
 * ends) and whose first node a head pointer names: an eventcount's sleepers (ec.c), the live
 * periodic timers (timer.c). Adding a node at the front and unlinking one, written once. Macros,
 * since each list has its own node type; head and n are evaluated more than once (pass plain
 * lvalues). The caller's lock guards the list.
 */
#ifndef CREW_LIST_H
#define CREW_LIST_H

#include <stddef.h>

/* n first in the list *head names. */
#define CREW__LIST_PUSH(head, n)                                                                 \
    do {                                                                                         \
        (n)->prev = NULL;                                                                        \
        (n)->next = (head);                                                                      \
        if (head)                                                                                \
            (head)->prev = (n);                                                                  \
        (head) = (n);                                                                            \
    } while (0)

/* n out of the list head names (its own next and prev are left as they were). */
#define CREW__LIST_UNLINK(head, n)                                                               \
    do {                                                                                         \
        if ((n)->prev)                                                                           \
            (n)->prev->next = (n)->next;                                                         \
        else                                                                                     \
            (head) = (n)->next;                                                                  \
        if ((n)->next)                                                                           \
            (n)->next->prev = (n)->prev;                                                         \
    } while (0)

#endif /* CREW_LIST_H */
