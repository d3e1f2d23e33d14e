"""An RNN language model in a library file, its sizes given by whoever builds it
(``RNNLanguageModel(ntoken, ninp, nhid)`` from command-line arguments in a ``main.py``), its
sequence length by the data: nothing here fixes either. Embedding -> dropout -> a two-layer
batch-first LSTM -> dropout -> a Linear decoder over the vocabulary at every step."""

import torch.nn as nn
import torch.nn.functional as F


class RNNLanguageModel(nn.Module):
    def __init__(self, ntoken, ninp, nhid, nlayers=2, dropout=0.2):
        super().__init__()
        self.drop = nn.Dropout(dropout)
        self.encoder = nn.Embedding(ntoken, ninp)
        self.rnn = nn.LSTM(ninp, nhid, nlayers, dropout=dropout, batch_first=True)
        self.decoder = nn.Linear(nhid, ntoken)

    def forward(self, tokens):
        emb = self.drop(self.encoder(tokens))
        output, _ = self.rnn(emb)
        return F.log_softmax(self.decoder(self.drop(output)), dim=-1)


class ConvHead(nn.Module):
    """A classifier head over feature maps of ``in_channels`` channels, any size."""

    def __init__(self, in_channels, num_classes, hidden=32):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, hidden, 3, padding=1)
        self.bn = nn.BatchNorm2d(hidden)
        self.fc = nn.Linear(hidden, num_classes)

    def forward(self, x):
        x = F.relu(self.bn(self.conv(x)))
        x = F.adaptive_avg_pool2d(x, 1).flatten(1)
        return self.fc(x)
