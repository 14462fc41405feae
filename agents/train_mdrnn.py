"""The Dots and Boxes report's multidimensional recurrent Q-network (`arena train --net mdrnn`), and its board representations.

The network (the report's section 2.4, after Graves et al.'s MDRNN): a 2D RNN cell, by default the
report's simple tanh cell (`--cell tanh`)

    h[i, j] = tanh(W x[i, j] + U (h[i-1, j] + h[i, j-1]) + b)

or a gated recurrent unit (`--cell gru`, the report's section 2.6; Cho et al.'s GRU, as in Chung et
al.) whose previous state is the mean of the predecessors inside the grid,

    s = (h[i-1, j] + h[i, j-1]) / 2 (only the one inside on the first row or column; 0 at the corner)
    z = sigmoid(W_z x[i, j] + U_z s + b_z), r = sigmoid(W_r x[i, j] + U_r s + b_r)
    h[i, j] = (1 - z) * s + z * tanh(W_c x[i, j] + U_c (r * s) + b_c)

(the mean, not the sum: a convex mix of states in (-1, 1) stays in (-1, 1), where a sum carried
through the update gate would grow along the grid like Pascal's triangle). Either way the two
predecessors enter through one set of recurrent weights (so the cell does not tell the grid from
its transpose: the report's diagonal mirroring), and the cell runs from each of the four corners
with the same weights (the grid flipped, swept from its top-left corner, flipped back) so that
every cell hears the whole board; the four hidden maps are summed and a per-cell fully connected
head (a ReLU layer per `--hidden` width, one of 64 by default: the report's) gives each cell's
Q-values, which are read off as action ids. A sweep goes along anti-diagonals: every
cell of one anti-diagonal depends only on the one before, so a grid of H x W cells takes H + W - 1
sequential steps, each a batch over its cells (the grid is skewed so that anti-diagonals are rows).
The four directions are one sweep over a batch four times as large.

The module takes the game's standard observation, `[batch, 4, rows + 1, cols + 1]` (horizontal
lines, vertical lines, own boxes, opponent boxes: games/dots_and_boxes.py), and re-encodes its two
line planes itself (pure tensor indexing, sized from the input's H and W, so one network plays
every board size), into one of the report's representations (section 2.3):

- `naive`: the (n+1) x (m+1) x 2 tensor of lines starting at each dot (rightward, downward), the
  cells outside the board -1; two outputs per cell, read as the game's `action_planes()` lay the
  actions out (horizontal h(r, c) at [r, c] of the first, vertical v(r, c) of the second).
- `box`: n x m x 4, each box's top, bottom, left and right lines; four outputs per box, and a line
  shared by two boxes gets the mean of its two boxes' outputs for it.
- `edge`: the board turned 45 degrees, so that the lines pack densely into an (n+m) x (n+m) grid:
  h(r, c) at [r + c, n + c - r], v(r, c) at [r + c, n - 1 + c - r]; the cells no line falls on are
  -1; one output per cell, those of unused cells ignored. A rotation or mirroring of the board is a
  rotation or mirroring of this grid, which the network commutes with: a turned board gets the
  turned Q-values (tests/test_training_mdrnn.py checks all eight symmetries).

As in the report, only the lines are fed, not who owns the boxes (nor so the score): the
representations hold the lines alone.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import nn

from agents.train_modules import Dense

#: Each representation's (agents/train_nets.REPRESENTATIONS) input channels and outputs per cell.
SIZES = {"naive": (2, 2), "box": (4, 4), "edge": (1, 1)}


def encode(x: torch.Tensor, representation: str) -> torch.Tensor:
    """The observation planes [batch, 4, n + 1, m + 1] as the representation's grid [batch, channels, H, W]."""
    if representation == "box":
        return encode_box(x)
    if representation == "edge":
        return encode_edge(x)
    return encode_naive(x)


def decode(q: torch.Tensor, representation: str, rows: int, cols: int) -> torch.Tensor:
    """The per-cell outputs [batch, H, W, outputs] of the representation's grid for an n x m board (`rows` x `cols`
    boxes) as one value per action id [batch, lines]."""
    if representation == "box":
        return decode_box(q)
    if representation == "edge":
        return decode_edge(q, rows, cols)
    return decode_naive(q)


def encode_naive(x: torch.Tensor) -> torch.Tensor:
    """[batch, 2, n + 1, m + 1]: the line planes, -1 where a line would leave the board (the last column's
    horizontal lines, the last row's vertical ones)."""
    rows, cols = x.shape[2], x.shape[3]
    horizontal = torch.cat([x[:, 0, :, : cols - 1], torch.full_like(x[:, 0, :, :1], -1.0)], dim=2)
    vertical = torch.cat([x[:, 1, : rows - 1, :], torch.full_like(x[:, 1, :1, :], -1.0)], dim=1)
    return torch.stack([horizontal, vertical], dim=1)


def decode_naive(q: torch.Tensor) -> torch.Tensor:
    rows, cols = q.shape[1], q.shape[2]
    return torch.cat([q[:, :, : cols - 1, 0].flatten(1), q[:, : rows - 1, :, 1].flatten(1)], dim=1)


def encode_box(x: torch.Tensor) -> torch.Tensor:
    """[batch, 4, n, m]: each box's top, bottom, left and right line."""
    rows, cols = x.shape[2] - 1, x.shape[3] - 1
    horizontal, vertical = x[:, 0], x[:, 1]
    return torch.stack([horizontal[:, :rows, :cols], horizontal[:, 1:, :cols], vertical[:, :rows, :cols], vertical[:, :rows, 1:]], dim=1)


def decode_box(q: torch.Tensor) -> torch.Tensor:
    """A line's value: the mean of its one or two boxes' outputs for it (top/bottom for h, left/right for v)."""
    top, bottom, left, right = q[..., 0], q[..., 1], q[..., 2], q[..., 3]
    ones = torch.ones_like(top)
    # A box's top line is h(r, c), its bottom h(r + 1, c): padded by a row below and above, they align on the h lines.
    horizontal = (nn.functional.pad(top, (0, 0, 0, 1)) + nn.functional.pad(bottom, (0, 0, 1, 0))) / (
        nn.functional.pad(ones, (0, 0, 0, 1)) + nn.functional.pad(ones, (0, 0, 1, 0)))  # fmt: skip
    vertical = (nn.functional.pad(left, (0, 1)) + nn.functional.pad(right, (1, 0))) / (
        nn.functional.pad(ones, (0, 1)) + nn.functional.pad(ones, (1, 0)))  # fmt: skip
    return torch.cat([horizontal.flatten(1), vertical.flatten(1)], dim=1)


def edge_cells(rows: int, cols: int, device: torch.device) -> torch.Tensor:
    """For an n x m board (`rows` x `cols` boxes), each line's cell of the (n+m) x (n+m) edge grid, flattened, in action-id
    order: h(r, c) (r = 0..n, c = 0..m-1), then v(r, c) (r = 0..n-1, c = 0..m)."""
    size = rows + cols
    h_row = torch.arange(rows + 1, device=device).repeat_interleave(cols)
    h_col = torch.arange(cols, device=device).repeat(rows + 1)
    v_row = torch.arange(rows, device=device).repeat_interleave(cols + 1)
    v_col = torch.arange(cols + 1, device=device).repeat(rows)
    horizontal = (h_row + h_col) * size + rows + h_col - h_row
    vertical = (v_row + v_col) * size + rows - 1 + v_col - v_row
    return torch.cat([horizontal, vertical])


def lines(x: torch.Tensor) -> torch.Tensor:
    """[batch, lines]: whether each line is drawn, in action-id order (the observation's line planes, trimmed and flattened)."""
    rows, cols = x.shape[2] - 1, x.shape[3] - 1
    return torch.cat([x[:, 0, :, :cols].flatten(1), x[:, 1, :rows, :].flatten(1)], dim=1)


def encode_edge(x: torch.Tensor) -> torch.Tensor:
    """[batch, 1, n + m, n + m]: the lines turned 45 degrees into a dense grid; -1 where no line falls."""
    rows, cols = x.shape[2] - 1, x.shape[3] - 1
    size = rows + cols
    grid = torch.full((x.shape[0], size * size), -1.0, dtype=x.dtype, device=x.device)
    grid = grid.index_copy(1, edge_cells(rows, cols, x.device), lines(x))
    return grid.view(x.shape[0], 1, size, size)


def decode_edge(q: torch.Tensor, rows: int, cols: int) -> torch.Tensor:
    """Each line's cell's output, for an n x m board (`rows` x `cols` boxes); the unused cells' are ignored."""
    return q.reshape(q.shape[0], -1).index_select(1, edge_cells(rows, cols, q.device))


class DiagonalSweep(nn.Module):
    """One 2D RNN pass from the top-left corner of the grid, by the cell its subclass's `step` is; `input` projects
    every cell's input at once, before the sweep."""

    def __init__(self, projection: nn.Linear, units: int) -> None:
        super().__init__()
        self.units = units  # the state's width
        self.input = projection

    def step(self, projected: torch.Tensor, total: torch.Tensor, count: torch.Tensor) -> torch.Tensor:
        """One anti-diagonal's new states [batch, cells, units] from its cells' projected inputs, the sum of each
        cell's two predecessors' states (0 for a predecessor off the grid) and how many are on it (at least 1)."""
        raise NotImplementedError

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """[batch, H, W, inputs] -> [batch, H, W, width], along the H + W - 1 anti-diagonals."""
        batch, height, width = x.shape[0], x.shape[1], x.shape[2]
        projected = self.input(x)
        units = projected.shape[3]
        diagonals = height + width - 1
        # Skewed: row d holds anti-diagonal d, cell (i, d - i) at position i; positions off the grid read a zero row.
        position = torch.arange(height, device=x.device).view(1, height)
        column = torch.arange(diagonals, device=x.device).view(diagonals, 1) - position
        inside = (column >= 0) & (column < width)
        source = torch.where(inside, position * width + column, torch.full_like(column, height * width))
        padded = torch.cat([projected.reshape(batch, height * width, units), projected.new_zeros(batch, 1, units)], dim=1)
        skewed = padded.index_select(1, source.flatten()).view(batch, diagonals, height, units)
        masks = inside.to(x.dtype).unsqueeze(2).unbind(0)
        # A cell's predecessors on the grid: the one above unless on the first row, the one left unless on the first column.
        counts = ((position >= 1).to(x.dtype) + (column >= 1).to(x.dtype)).clamp(min=1.0).unsqueeze(2).unbind(0)
        state = projected.new_zeros(batch, height, self.units)
        steps: list[torch.Tensor] = []
        # unbind, not skewed[:, d]: the gradient of each slice would be a zero tensor of the whole skewed grid.
        for d, diagonal in enumerate(skewed.unbind(1)):
            # Cell (i, d - i) hears (i, d - 1 - i), at position i of the last diagonal, and (i - 1, d - i), at position i - 1.
            above = torch.cat([state.new_zeros(batch, 1, self.units), state[:, : height - 1]], dim=1)
            state = self.step(diagonal, state + above, counts[d]) * masks[d]
            steps.append(state)
        swept = torch.stack(steps, dim=1).reshape(batch, diagonals * height, self.units)
        rows = torch.arange(height, device=x.device).view(height, 1)
        cells = (rows + torch.arange(width, device=x.device).view(1, width)) * height + rows  # cell (i, j): diagonal i + j, position i
        return swept.index_select(1, cells.flatten()).view(batch, height, width, self.units)


class Sweep(DiagonalSweep):
    """The tanh cell: h[i, j] = tanh(W x[i, j] + b + U (h[i-1, j] + h[i, j-1]))."""

    def __init__(self, inputs: int, width: int) -> None:
        super().__init__(Dense(inputs, width), width)  # W and b
        self.recurrent = Dense(width, width, bias=False)  # U, shared by both predecessors

    def step(self, projected: torch.Tensor, total: torch.Tensor, count: torch.Tensor) -> torch.Tensor:
        return torch.tanh(projected + self.recurrent(total))


class GRUSweep(DiagonalSweep):
    """The GRU cell (the module's docstring): its previous state is the mean of the predecessors on the grid, through
    one set of recurrent weights."""

    def __init__(self, inputs: int, width: int) -> None:
        super().__init__(Dense(inputs, 3 * width), width)  # W_z, W_r, W_c and their biases, in that order
        self.recurrent = Dense(width, 2 * width, bias=False)  # U_z and U_r
        self.candidate = Dense(width, width, bias=False)  # U_c

    def step(self, projected: torch.Tensor, total: torch.Tensor, count: torch.Tensor) -> torch.Tensor:
        previous = total / count
        gates = torch.sigmoid(projected[..., : 2 * self.units] + self.recurrent(previous))
        update, reset = gates[..., : self.units], gates[..., self.units :]
        candidate = torch.tanh(projected[..., 2 * self.units :] + self.candidate(reset * previous))
        return (1 - update) * previous + update * candidate


#: `--cell`'s 2D RNN cells (agents/train_nets.CELLS); the first is the default.
SWEEPS = {"tanh": Sweep, "gru": GRUSweep}


class MDRNN(nn.Module):
    """The representation's grid, swept from its four corners by one cell, summed, then a per-cell head; any board size."""

    def __init__(self, representation: str, width: int, hidden: Sequence[int], dueling: bool, cell: str = "tanh") -> None:
        super().__init__()
        inputs, outputs = SIZES[representation]
        self.representation = representation
        self.sweep = SWEEPS[cell](inputs, width)
        layers: list[nn.Module] = []
        for before, after in zip((width, *hidden), hidden):
            layers += [Dense(before, after), nn.ReLU()]
        self.head = nn.Sequential(*layers, Dense(hidden[-1], outputs))
        self.dueling = dueling
        self.value = Dense(width, 1)

    def features(self, grid: torch.Tensor) -> torch.Tensor:
        """[batch, channels, H, W] -> the four sweeps' hidden maps summed, [batch, H, W, width]."""
        cells = grid.permute(0, 2, 3, 1)
        batch = cells.shape[0]
        flips = torch.cat([cells, cells.flip(2), cells.flip(1), cells.flip([1, 2])])
        swept = self.sweep(flips)
        return (swept[:batch] + swept[batch : 2 * batch].flip(2)) + (swept[2 * batch : 3 * batch].flip(1) + swept[3 * batch :].flip([1, 2]))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        features = self.features(encode(x, self.representation))
        values = decode(self.head(features), self.representation, x.shape[2] - 1, x.shape[3] - 1)
        if self.dueling:
            return self.value(features.mean(dim=(1, 2))) + values - values.mean(dim=1, keepdim=True)
        return values

