"""Results made elsewhere: import of fio/dd/bonnie++ output, and reparse."""
